#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""tools/reproduce --calibrate's table: per scenario, the share of its A/A experiments that printed a
difference (false positives) and the share of the same runs, B scaled by 0.95, that resolve it
(power), each with its 95 % Wilson interval (docs/ab.md, "Calibration").

Usage: calibration_table.py OUT BUDGET BLOCKS NAME...  (reads OUT/calibrate-NAME/aa.json, power.json)
"""

import json, math, sys
out, budget, blocks, names = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]

def wilson(k, n, z=1.959964):  # the 95 % score interval of k successes in n
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)

def rate(k, n):
    low, high = wilson(k, n)
    return f"{100 * k / n:.1f} % [{100 * low:.1f}, {100 * high:.1f}]"

def load(path):
    record = json.load(open(path))
    return record if isinstance(record, list) else [record]

print(f"| scenario | A/A experiments ({budget} s, {blocks} block(s) each) | with a verdict | false-positive rate [95 % Wilson] | B x 0.95 resolved | power at 5 % [95 % Wilson] |")
print("|---|---:|---:|---|---:|---|")
for name in names:
    aa = load(f"{out}/calibrate-{name}/aa.json")
    power = load(f"{out}/calibrate-{name}/power.json")
    false = sum(1 for r in aa if r["verdict"]["detected"])
    hits = sum(1 for r in power if r["verdict"]["detected"])
    print(f"| {name} | {len(aa)} | {false} | {rate(false, len(aa))} | {hits} | {rate(hits, len(power))} |")
print(f"\nruns: {out}/calibrate-NAME/aa-*.json; re-analysed: aa.json, power.json (binder-ab --replay)")

