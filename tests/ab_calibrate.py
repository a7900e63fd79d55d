#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""binder-ab calibrate FILE (issue 46): N A/A experiments of any experiment file, not only the
four scenarios tools/reproduce --calibrate knew. A small file of two comparisons (a sweep) runs
twice: the table has one row per comparison with 2 experiments, calibration.json has the same
numbers, every experiment's record is an A/A one (B ran A's variant), and each record names the
commit the build was made from (git describe of the source tree, "unknown" outside a checkout).

Usage: ab_calibrate.py BINDER_AB SOURCE_ROOT   (meson test 'ab-calibrate', suite integration; root)
"""

import glob
import json
import os
import subprocess
import sys
import tempfile


def source_commit(root):
    try:
        return subprocess.run(["git", "-C", root, "describe", "--always", "--dirty", "--abbrev=12"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main():
    if os.geteuid() != 0:
        print("ab-calibrate: needs root (a FUSE mount per comparison)")
        return 77
    binder_ab, root = sys.argv[1], sys.argv[2]
    problems = []
    with tempfile.TemporaryDirectory() as scratch:
        experiment = {
            "name": "calibrated",
            "devices": {"a": {"variant": "alloc_lock=mutex"},
                        "b": {"variant": "alloc_lock=spin-install"}},
            "workload": {"program": "binder-throughput", "payload": 0, "iterations": 100},
            "sweep": {"workload.payload": [0, 4096]},
            "blocks": 3,
            "time": 2,
        }
        path = os.path.join(scratch, "calibrated.json")
        with open(path, "w") as f:
            json.dump(experiment, f)
        out = os.path.join(scratch, "out")
        result = subprocess.run([binder_ab, "calibrate", "-n", "2", "--out", out, "--progress",
                                 "none", path], capture_output=True, text=True, timeout=600)
        if result.returncode != 0:
            print(result.stdout, result.stderr)
            return 1
        rows = [line for line in result.stdout.splitlines()
                if line.startswith("| ") and not line.startswith("| comparison")]
        if len(rows) != 2:
            problems.append(f"want one row per comparison (2), got:\n{result.stdout}")
        for row in rows:
            cells = [cell.strip() for cell in row.strip("|").split("|")]
            if cells[1] != "2":
                problems.append(f"want 2 A/A experiments in the row: {row}")
        table = json.load(open(os.path.join(out, "calibration.json")))
        if [entry["experiments"] for entry in table] != [2, 2]:
            problems.append(f"calibration.json: {table}")
        records = sorted(glob.glob(os.path.join(out, "aa-*", "calibrated.run.json")))
        if len(records) != 2:
            problems.append(f"want a record per experiment: {records}")
        want_commit = source_commit(root)
        for record_path in records:
            record = json.load(open(record_path))
            if not record["options"]["aa"] or not all(c["aa"] for c in record["comparisons"]):
                problems.append(f"{record_path} is not an A/A experiment")
            if record.get("commit") != want_commit:
                problems.append(f"{record_path} names commit {record.get('commit')!r}, "
                                f"the source is at {want_commit!r}")
    for problem in problems:
        print("ab-calibrate:", problem)
    if not problems:
        print("ab-calibrate: 2 comparisons x 2 A/A experiments, records A/A, commit", want_commit)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
