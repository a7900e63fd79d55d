#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""binder-ab run stopped with Ctrl-C tears every block down (issue 46 point 2): it starts an
experiment whose blocks have every condition binder-ab makes itself (a daemon on a fresh mount,
servicemanagers, nice-19 callers of the workload's services, separate binder-messaging traffic, a
CPU hog, a memory cgroup with its anonymous program, and swap on a zram device of its own where
the machine has no swap), waits until the first block measures, sends SIGINT, and checks that no
mount, mount directory, cgroup, zram device or process of the run is left.

Usage: ab_run_teardown.py BINDER_AB   (meson test 'ab-run-teardown', suite integration; root)
Prints what is left and exits 1; 77 (skipped) when not root.
"""

import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time


def mounts():
    with open("/proc/mounts") as f:
        return {line.split()[1] for line in f if "/tmp/cused-ab-" in line.split()[1]}


def memory_cgroups():
    return set(glob.glob("/sys/fs/cgroup/memory/cused-ab-*") + glob.glob("/sys/fs/cgroup/cused-ab-*"))


def zram_devices():
    return set(glob.glob("/sys/block/zram*"))


def processes_with(text):
    """pids whose command line holds `text` (the run's mount, or its experiment file: the CPU hog
    and the memory program are forks of binder-ab and keep its command line)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                line = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{entry}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in line and state != "Z":
            found.append(f"{entry}: {line.strip()}")
    return found


def main():
    if os.geteuid() != 0:
        print("ab-run-teardown: needs root (mounts, cgroups, zram)")
        return 77
    binder_ab = sys.argv[1]
    problems = []
    with tempfile.TemporaryDirectory() as scratch:
        conditions = {"background_callers": True, "background_traffic": True, "cpu_hogs": 1,
                      "shrinker_stress": True}
        if os.access("/sys/fs/cgroup/memory/cgroup.procs", os.W_OK) or os.path.exists(
                "/sys/fs/cgroup/cgroup.controllers"):
            conditions["memcg"] = {"mib": 64, "zram": True}
        else:
            print("ab-run-teardown: no memory cgroup hierarchy here: the memcg condition is left out")
        experiment = {
            "name": "teardown",
            "devices": {"a": {"variant": "alloc_lock=mutex"},
                        "b": {"variant": "alloc_lock=spin-install"}},
            "workload": {"program": "binder-throughput", "payload": 4096, "iterations": 200},
            "conditions": conditions,
            "blocks": 3,
            "time": 60,
        }
        path = os.path.join(scratch, "teardown-experiment.json")
        with open(path, "w") as f:
            json.dump(experiment, f)
        before = {"mounts": mounts(), "cgroups": memory_cgroups(), "zram": zram_devices()}
        log_path = os.path.join(scratch, "stderr")
        with open(log_path, "w") as log:
            run = subprocess.Popen([binder_ab, "run", path, "--out", scratch, "--progress", "plain",
                                    "--progress-every", "1"], stdout=subprocess.DEVNULL,
                                   stderr=log)
            deadline = time.monotonic() + 60
            measuring = False
            while time.monotonic() < deadline and run.poll() is None:
                with open(log_path) as f:
                    if "block 1/3" in f.read():
                        measuring = True
                        break
                time.sleep(0.2)
            during = {"mounts": mounts() - before["mounts"],
                      "cgroups": memory_cgroups() - before["cgroups"],
                      "zram": zram_devices() - before["zram"]}
            file_processes = processes_with(path)
            run.send_signal(signal.SIGINT)
            try:
                status = run.wait(timeout=60)
            except subprocess.TimeoutExpired:
                run.kill()
                status = "still running 60 s after SIGINT"
        with open(log_path) as f:
            log_text = f.read()
        if not measuring:
            problems.append(f"the first block did not start measuring; binder-ab said:\n{log_text}")
        # What the block had made, so that the checks below check something.
        if not during["mounts"]:
            problems.append("no mount under /tmp/cused-ab-* while the block ran")
        if "memcg" in conditions and not during["cgroups"]:
            problems.append("no memory cgroup cused-ab-* while the block ran")
        if len(file_processes) < 2:  # binder-ab and its CPU hog at least
            problems.append(f"binder-ab's own children not seen: {file_processes}")
        if status != 128 + signal.SIGINT:
            problems.append(f"binder-ab ended with {status}, not {128 + signal.SIGINT}")
        time.sleep(0.5)
        for mount in during["mounts"]:
            if mount in mounts():
                problems.append(f"{mount} is still mounted")
            if os.path.exists(mount):
                problems.append(f"{mount} is still there")
        for cgroup in during["cgroups"]:
            if os.path.exists(cgroup):
                problems.append(f"the cgroup {cgroup} is still there")
        for device in zram_devices() - before["zram"]:
            problems.append(f"{device} is still there")
        for mount in during["mounts"]:
            problems += [f"left running: {p}" for p in processes_with(mount)]
        problems += [f"left running: {p}" for p in processes_with(path)]
        print(f"ab-run-teardown: during the block: mounts {sorted(during['mounts'])}, cgroups "
              f"{sorted(during['cgroups'])}, new zram {sorted(during['zram'])}, "
              f"{len(file_processes)} processes of the file; after SIGINT: exit {status}")
    for problem in problems:
        print(f"ab-run-teardown: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
