#!/usr/bin/env python3
"""The daemon's USDT probes (cused/host/usdt_probes.cc, docs/tracing.md "USDT probes"): the
binary's stapsdt notes hold one probe of provider `cused` per trace event, named as the event
(the names of cused/host/ftrace_text.cc), and no other.

Usage: usdt_probes.py SOURCE_ROOT CUSED_BINARY
"""
import pathlib
import re
import subprocess
import sys


def event_names(source_root):
    text = (pathlib.Path(source_root) / "cused/host/ftrace_text.cc").read_text()
    names = re.search(r"kNames\{(.*?)\};", text, re.S).group(1)
    return set(re.findall(r'"((?:binder|cused)_[a-z_]+)"', names))


def probe_names(binary):
    notes = subprocess.run(["readelf", "-n", binary], check=True, capture_output=True,
                           text=True).stdout
    return re.findall(r"Provider: cused\s+Name: (\S+)", notes)


def main():
    events = event_names(sys.argv[1])
    probes = probe_names(sys.argv[2])
    problems = []
    if len(probes) != len(set(probes)):
        problems.append(f"probes named twice: {sorted(p for p in set(probes) if probes.count(p) > 1)}")
    for name in sorted(events - set(probes)):
        problems.append(f"no probe for the event {name}")
    for name in sorted(set(probes) - events):
        problems.append(f"a probe {name} that is no event")
    print("\n".join(problems) or f"usdt probes OK: {len(probes)} probes of provider cused, one per event")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
