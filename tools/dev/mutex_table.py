#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The mutex handoff/steal table (issue 33), from tools/reproduce mutex-handoff's binder-ab runs.

The proxy-execution RFC thread ("sched/core: Activate blocked donor when no owner is found")
published sched-messaging's time per group count and mutex policy. tools/reproduce runs each
policy against vanilla as a binder-ab comparison per group count (in blocks); this prints the
published table's twin (median seconds, % against vanilla with its interval, the published value
beside it), checks the table's shape criteria, and draws the four curves normalized to vanilla
(cused's with their intervals, the published ones dashed).

Usage: mutex_table.py OUT_DIR   (reads OUT_DIR/mutex-handoff-G-POLICY.json, writes
                                 OUT_DIR/mutex-handoff-table.svg and .json)
"""

import json
import os
import statistics
import sys

# group count -> seconds, per column: vanilla, handoff, steal + handoff, idle + steal.
PUBLISHED = {
    1: (3.12, 3.47, 3.63, 3.59),
    2: (3.43, 4.33, 4.14, 3.48),
    4: (4.05, 5.95, 5.45, 4.00),
    8: (4.29, 9.56, 7.80, 4.31),
    16: (5.89, 12.29, 11.89, 5.91),
}
# The published columns after vanilla, as cused's lock_policy= (docs/locking.md, "The published
# table's columns"); vanilla is lock_policy=spin-then-park.
COLUMNS = [("handoff", "handoff"), ("steal + handoff", "steal-window"), ("idle + steal", "steal")]
VANILLA = "spin-then-park"


def cell_path(out, groups, policy):
    return os.path.join(out, f"mutex-handoff-{groups}-{policy}.json")


def load_cells(out):
    """{(groups, policy): binder-ab's JSON} for every cell that ran."""
    cells = {}
    for groups in PUBLISHED:
        for _, policy in COLUMNS:
            path = cell_path(out, groups, policy)
            if os.path.exists(path):
                with open(path) as f:
                    cells[(groups, policy)] = json.load(f)
    return cells


def vanilla_seconds(cells, groups):
    """The median of vanilla's runs over the group count's three comparisons."""
    values = []
    for (g, _), cell in cells.items():
        if g == groups:
            values += cell["a"]["runs"]
    return statistics.median(values) if values else None


def published_percent(groups, column):
    vanilla, value = PUBLISHED[groups][0], PUBLISHED[groups][column]
    return 100 * (vanilla - value) / vanilla


def cused_percent(ratio):
    """The published convention: (vanilla - policy) / vanilla, negative when the policy is slower."""
    return 100 * (1 - ratio)


def table(cells, groups_run):
    lines = ["| groups | vanilla (s) | " + " | ".join(
        f"{name}: cused (s, % [95 % CI]) | published" for name, _ in COLUMNS) + " |",
             "|---:|---:|" + "---|---:|" * len(COLUMNS)]
    for groups in groups_run:
        vanilla = vanilla_seconds(cells, groups)
        row = [str(groups), f"{vanilla:.3f} (published {PUBLISHED[groups][0]:.2f})"
               if vanilla is not None else "-"]
        for column, (_, policy) in enumerate(COLUMNS, start=1):
            cell = cells.get((groups, policy))
            if cell is None:
                row += ["not run", f"{PUBLISHED[groups][column]:.2f} ({published_percent(groups, column):+.2f} %)"]
                continue
            r = cell["ratio"]
            median = cell["b"]["summary"]["median"]
            # A higher ratio (slower) is a lower percentage: the interval's ends swap.
            row.append(f"{median:.3f} ({cused_percent(r['value']):+.1f} % "
                       f"[{cused_percent(r['high']):+.1f}, {cused_percent(r['low']):+.1f}])")
            row.append(f"{PUBLISHED[groups][column]:.2f} ({published_percent(groups, column):+.2f} %)")
        lines.append("| " + " | ".join(row) + " |")
    return lines


def interval(cells, groups, policy):
    cell = cells.get((groups, policy))
    if cell is None:
        return None
    r = cell["ratio"]
    return r["low"], r["value"], r["high"]


def fmt(i):
    return f"{i[1]:.3f} [{i[0]:.3f}, {i[2]:.3f}]"


def overall(states):
    """A criterion over sizes: contradicted anywhere -> not reproduced; else reproduced where the
    intervals decide it at every size that can (at least one); else not resolved."""
    if "contradicted" in states:
        return "not reproduced"
    decided = [s for s in states if s != "undecidable"]
    if decided and all(s == "reproduced" for s in decided):
        return "reproduced"
    return "not resolved"


def criteria(cells, groups_run):
    """[(criterion, verdict, why)] for the published shape. Each is judged within the 95 %
    intervals and has three outcomes: reproduced (the intervals show it), not reproduced (they
    contradict it), not resolved (they allow both). An interval wide enough to hold every answer
    never counts as a reproduction."""
    results = []
    handoff = {g: interval(cells, g, "handoff") for g in groups_run}
    handoff = {g: i for g, i in handoff.items() if i is not None}
    penalised = [g for g, i in handoff.items() if i[0] > 1]  # handoff resolved slower
    # 1. Handoff's penalty grows with the group count, at least up to the size where this machine
    # stops it (the largest point): no resolved step down before it, a penalty resolved there, and
    # that penalty resolved above the smallest size's.
    sizes = sorted(handoff)
    if sizes:
        peak = max(sizes, key=lambda g: handoff[g][1])
        before = [g for g in sizes if g <= peak]
        drops = [(a, b) for a in before for b in before if b > a and handoff[b][2] < handoff[a][0]]
        first = sizes[0]
        grew = peak != first and handoff[peak][0] > handoff[first][2]
        if drops:
            verdict = "not reproduced"
        elif peak in penalised and grew:
            verdict = "reproduced"
        else:
            verdict = "not resolved"
        after = [g for g in sizes if g > peak]
        why = ("B/A " + ", ".join(f"{g}: {fmt(handoff[g])}" for g in sizes)
               + f"; largest at {peak} group(s)"
               + (f", points lower beyond it ({', '.join(map(str, after))})" if after else "")
               + (f"; resolved drops {', '.join(f'{a}->{b}' for a, b in drops)}" if drops else "")
               + ("; growth from the smallest size resolved" if grew else
                  "; growth from the smallest size not resolved"))
        results.append(("handoff's penalty grows with the group count (monotone within the "
                        "intervals)", verdict, why))
    # 2. steal + handoff lies between handoff and vanilla. Decidable where handoff's penalty is
    # resolved: there its interval must not lie wholly below 1 or wholly above handoff's, and its
    # point must lie between 1 and handoff's point.
    states, notes = [], []
    for g in groups_run:
        sh, h = interval(cells, g, "steal-window"), handoff.get(g)
        if sh is None or h is None:
            continue
        if sh[2] < 1 or sh[0] > h[2]:
            state = "contradicted"
        elif g not in penalised:
            state = "undecidable"
        else:
            state = "reproduced" if 1 <= sh[1] <= h[1] else "not between"
        states.append(state)
        notes.append(f"{g}: {fmt(sh)} against handoff's {h[1]:.3f} ({state})")
    results.append(("steal + handoff lies between handoff and vanilla at every size",
                    overall(states), "; ".join(notes)))
    # 3. idle + steal is vanilla within its interval at every size: decidable where handoff's
    # penalty is resolved, and there only if the interval also excludes handoff's point (an
    # interval that holds both vanilla and handoff says nothing).
    states, notes = [], []
    for g in groups_run:
        i, h = interval(cells, g, "steal"), handoff.get(g)
        if i is None:
            continue
        if not i[0] <= 1 <= i[2]:
            state = "contradicted"
        elif h is None or g not in penalised:
            state = "undecidable"
        else:
            state = "reproduced" if i[2] < h[1] else "too wide"
        states.append(state)
        notes.append(f"{g}: {fmt(i)} ({state})")
    results.append(("idle + steal is within its interval of vanilla at every size",
                    overall(states), "; ".join(notes)))
    return results


def svg(cells, groups_run):
    """Four curves over the group count, normalized to vanilla: cused's (solid, with its 95 %
    intervals) and the published ones (dashed)."""
    width, height, left, right, top, bottom = 900, 440, 70, 260, 60, 60
    groups = list(groups_run)
    points = [v for g in groups for _, p in COLUMNS
              for v in (interval(cells, g, p) or ())] + [
        PUBLISHED[g][c] / PUBLISHED[g][0] for g in groups for c in range(1, 4)] + [1.0]
    low, high = min(points + [0.9]), max(points + [1.1])
    pad = (high - low) * 0.05
    low, high = low - pad, high + pad
    span_x = width - left - right

    inset = 30  # the first and last group count off the axes

    def x(index, shift=0):
        step = (span_x - 2 * inset) / max(1, len(groups) - 1)
        return left + inset + step * index + shift

    def y(value):
        return top + (height - top - bottom) * (high - value) / (high - low)

    colours = {"vanilla": "black", "handoff": "#d62728", "steal-window": "#ff7f0e",
               "steal": "#1f77b4"}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="22" font-size="14">mutex policies: time against vanilla\'s, by '
           f'binder-messaging group count</text>',
           f'<text x="{left}" y="40">solid: cused, with its 95 % two-level interval; dashed: the '
           f'published sched-messaging table</text>']
    # Axes, ticks and the vanilla line.
    out.append(f'<line x1="{left}" y1="{y(low)}" x2="{left}" y2="{y(high)}" stroke="black"/>')
    out.append(f'<line x1="{left}" y1="{y(low)}" x2="{width - right}" y2="{y(low)}" stroke="black"/>')
    steps = 6
    for k in range(steps + 1):
        value = low + (high - low) * k / steps
        out.append(f'<text x="{left - 6}" y="{y(value) + 4:.1f}" text-anchor="end">{value:.2f}</text>')
    for index, g in enumerate(groups):
        out.append(f'<text x="{x(index):.1f}" y="{y(low) + 18:.1f}" text-anchor="middle">{g}</text>')
    out.append(f'<text x="{left + span_x / 2:.1f}" y="{height - 15}" text-anchor="middle">groups</text>')
    out.append(f'<line x1="{left}" y1="{y(1):.1f}" x2="{width - right}" y2="{y(1):.1f}" '
               f'stroke="{colours["vanilla"]}"/>')
    for column, (name, policy) in enumerate(COLUMNS, start=1):
        colour = colours[policy]
        shift = (column - 2) * 6  # the three intervals at one group count side by side
        published = [(x(i), y(PUBLISHED[g][column] / PUBLISHED[g][0])) for i, g in enumerate(groups)]
        out.append('<polyline fill="none" stroke-dasharray="5,4" stroke="{}" points="{}"/>'.format(
            colour, " ".join(f"{px:.1f},{py:.1f}" for px, py in published)))
        measured = [(i, interval(cells, g, policy)) for i, g in enumerate(groups)]
        measured = [(i, iv) for i, iv in measured if iv is not None]
        if measured:
            out.append('<polyline fill="none" stroke-width="2" stroke="{}" points="{}"/>'.format(
                colour, " ".join(f"{x(i, shift):.1f},{y(iv[1]):.1f}" for i, iv in measured)))
        for i, (lo, value, hi) in measured:
            out.append(f'<line x1="{x(i, shift):.1f}" y1="{y(lo):.1f}" x2="{x(i, shift):.1f}" '
                       f'y2="{y(hi):.1f}" stroke="{colour}"/>')
            out.append(f'<circle cx="{x(i, shift):.1f}" cy="{y(value):.1f}" r="3" fill="{colour}"/>')
    legend = [("vanilla (spin-then-park)", "vanilla")] + [
        (f"{name} ({policy})", policy) for name, policy in COLUMNS]
    for k, (label, key) in enumerate(legend):
        ly = top + 20 + 20 * k
        out.append(f'<line x1="{width - right + 10}" y1="{ly}" x2="{width - right + 30}" y2="{ly}" '
                   f'stroke="{colours[key]}" stroke-width="2"/>')
        out.append(f'<text x="{width - right + 35}" y="{ly + 4}">{label}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    out = sys.argv[1]
    cells = load_cells(out)
    groups_run = sorted({g for g, _ in cells})
    if not groups_run:
        print(f"mutex_table: no mutex-handoff-G-POLICY.json in {out}", file=sys.stderr)
        return 1
    print("mutex handoff/steal table: sched-messaging's published seconds beside binder-messaging's")
    print("median seconds on cused (% against vanilla as published: negative = slower than vanilla)")
    print()
    for line in table(cells, groups_run):
        print(line)
    print()
    print("| shape criterion | verdict | why (B/A against vanilla, 95 % two-level interval) |")
    print("|---|---|---|")
    judged = criteria(cells, groups_run)
    for name, verdict, why in judged:
        print(f"| {name} | {verdict} | {why} |")
    with open(os.path.join(out, "mutex-handoff-table.svg"), "w") as f:
        f.write(svg(cells, groups_run))
    with open(os.path.join(out, "mutex-handoff-table.json"), "w") as f:
        json.dump({"groups": groups_run,
                   "cells": {f"{g}-{p}": {"ratio": c["ratio"], "verdict": c["verdict"]["text"],
                                          "b_median": c["b"]["summary"]["median"]}
                             for (g, p), c in cells.items()},
                   "vanilla_seconds": {str(g): vanilla_seconds(cells, g) for g in groups_run},
                   "criteria": [{"criterion": n, "verdict": v, "why": w} for n, v, w in judged]},
                  f, indent=1)
    print(f"\nplot: {out}/mutex-handoff-table.svg; cells: {out}/mutex-handoff-G-POLICY.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
