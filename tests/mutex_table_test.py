#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""tools/dev/mutex_table.py's shape criteria (issue 33) on synthetic cells: the published shape is
reproduced, a contradicting one is not, and intervals too wide to tell are "not resolved", never a
reproduction. Also: the table has the published value beside each cell and the plot is an SVG
with four curves. Prints what is wrong and exits 1.

Usage: mutex_table_test.py [SOURCE_ROOT]   (meson test 'mutex-table', suite 'docs')
"""

import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tool_module import load_tool, source_root  # noqa: E402

ROOT = source_root()
table = load_tool("mutex_table")

GROUPS = [1, 2, 4, 8, 16]
problems = []


def cell(ratio, half, vanilla=1.0):
    """binder-ab's JSON as the table reads it: B/A with a symmetric interval, vanilla's runs."""
    return {"ratio": {"value": ratio, "low": ratio - half, "high": ratio + half},
            "verdict": {"text": "synthetic"},
            "a": {"runs": [vanilla] * 3}, "b": {"summary": {"median": vanilla * ratio}}}


def cells_of(columns, half):
    """columns: policy -> B/A per group count, each with the same half-width."""
    return {(g, policy): cell(values[k], half)
            for policy, values in columns.items() for k, g in enumerate(GROUPS)}


def verdicts(cells):
    return [verdict for _, verdict, _ in table.criteria(cells, GROUPS)]


def expect(name, cells, wanted):
    got = verdicts(cells)
    if got != wanted:
        problems.append(f"{name}: criteria {got}, expected {wanted}")


published_shape = {"handoff": [1.11, 1.26, 1.47, 2.23, 2.09],
                   "steal-window": [1.05, 1.15, 1.30, 1.80, 1.90],
                   "steal": [1.0, 1.01, 0.99, 1.0, 1.0]}
# The published shape, measured tightly: all three reproduced.
expect("published shape", cells_of(published_shape, 0.02), ["reproduced"] * 3)
# The same points with intervals that hold both vanilla and handoff everywhere: nothing resolved.
expect("wide intervals", cells_of(published_shape, 1.5), ["not resolved"] * 3)
# Near misses, one criterion each, the others as published.
flat = dict(published_shape, handoff=[1.2, 1.2, 1.2, 1.2, 1.2],
            **{"steal-window": [1.1] * 5})
expect("handoff flat (penalty without growth)", cells_of(flat, 0.02),
       ["not resolved", "reproduced", "reproduced"])
dropping = dict(published_shape, handoff=[1.5, 1.2, 1.6, 2.0, 1.9])
expect("handoff dropping before its peak", cells_of(dropping, 0.02),
       ["not reproduced", "reproduced", "reproduced"])
worse = dict(published_shape, **{"steal-window": [1.3, 1.4, 1.7, 2.5, 2.3]})
expect("steal + handoff above handoff", cells_of(worse, 0.02),
       ["reproduced", "not reproduced", "reproduced"])
faster = dict(published_shape, **{"steal-window": [0.9, 1.15, 1.30, 1.80, 1.90]})
expect("steal + handoff faster than vanilla", cells_of(faster, 0.02),
       ["reproduced", "not reproduced", "reproduced"])
slow_steal = dict(published_shape, steal=[1.0, 1.01, 1.1, 1.0, 1.0])
expect("idle + steal slower than vanilla at 4 groups", cells_of(slow_steal, 0.02),
       ["reproduced", "reproduced", "not reproduced"])
# idle + steal's interval holds 1 but also handoff's point: too wide to say it recovered.
cells = cells_of(published_shape, 0.02)
cells[(8, "steal")] = cell(1.0, 1.5)
expect("idle + steal too wide at 8 groups", cells, ["reproduced", "reproduced", "not resolved"])
# No handoff penalty anywhere (2 CPUs may show none): the other two cannot be decided.
none = {"handoff": [1.0] * 5, "steal-window": [1.0] * 5, "steal": [1.0] * 5}
expect("no handoff penalty", cells_of(none, 0.02),
       ["not resolved", "not resolved", "not resolved"])

# The table and the plot from files, as tools/reproduce leaves them.
with tempfile.TemporaryDirectory() as out:
    for (g, policy), c in cells_of(published_shape, 0.02).items():
        with open(table.cell_path(out, g, policy), "w") as f:
            json.dump(c, f)
    lines = table.table(table.load_cells(out), GROUPS)
    if len(lines) != 2 + len(GROUPS):
        problems.append(f"table: {len(lines)} lines for {len(GROUPS)} group counts")
    if "3.47 (-11.22 %)" not in lines[2]:
        problems.append(f"table: the published 1-group handoff cell is missing: {lines[2]}")
    if "(-11.0 % [-13.0, -9.0])" not in lines[2]:
        problems.append(f"table: cused's 1-group handoff cell is not -11.0 % [-13.0, -9.0]: {lines[2]}")
    picture = table.svg(table.load_cells(out), GROUPS)
    if not picture.startswith("<svg") or picture.count("<polyline") != 6:
        problems.append(f"svg: {picture.count('<polyline')} curves, expected 3 cused + 3 published")

for problem in problems:
    print(f"mutex-table: {problem}")
print(f"mutex-table: {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
