#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The daemon's USDT probes (cused/host/usdt_probes.cc, docs/tracing.md "USDT probes"): the
binary's stapsdt notes hold one probe of provider `cused` per trace event, named as the event
(the names of core/trace_event_names.h), and no other; and each has a semaphore, which a tracer
raises when it attaches and which makes the daemon fire the probes with no trace being written
(cused/host/usdt_feed.h).

Usage: usdt_probes.py SOURCE_ROOT CUSED_BINARY
"""
import pathlib
import re
import subprocess
import sys


def event_names(source_root):
    text = (pathlib.Path(source_root) / "core/trace_event_names.h").read_text()
    names = re.search(r"kTraceEventNames\{(.*?)\};", text, re.S).group(1)
    return set(re.findall(r'"((?:binder|cused)_[a-z_]+)"', names))


def probes(binary):
    """(name, semaphore address) of each probe of provider cused."""
    notes = subprocess.run(["readelf", "-n", binary], check=True, capture_output=True,
                           text=True).stdout
    return [(name, int(semaphore, 16)) for name, semaphore in
            re.findall(r"Provider: cused\s+Name: (\S+)\s+Location: \S+, Base: \S+, "
                       r"Semaphore: (0x[0-9a-f]+)", notes)]


def main():
    events = event_names(sys.argv[1])
    found = probes(sys.argv[2])
    probes_ = [name for name, _ in found]
    problems = [f"the probe {name} has no semaphore" for name, semaphore in found if semaphore == 0]
    if len({semaphore for _, semaphore in found}) != len(found):
        problems.append("probes share a semaphore")
    if len(probes_) != len(set(probes_)):
        problems.append(f"probes named twice: {sorted(p for p in set(probes_) if probes_.count(p) > 1)}")
    for name in sorted(events - set(probes_)):
        problems.append(f"no probe for the event {name}")
    for name in sorted(set(probes_) - events):
        problems.append(f"a probe {name} that is no event")
    print("\n".join(problems) or
          f"usdt probes OK: {len(probes_)} probes of provider cused, one per event, each with its semaphore")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
