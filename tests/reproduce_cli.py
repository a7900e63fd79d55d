#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""tools/reproduce's command line without running a scenario (issue 35): --help prints the header
and says that it builds build/ and writes build/reproduce; an unknown option is refused with a
pointer to --help, not taken for a scenario name; the duration it states for `all` is the one
README.md and docs/reproductions.md state; --trace without a comparison to trace is refused. Prints what is wrong and exits 1.

Usage: reproduce_cli.py [SOURCE_ROOT]   (default: the directory above this script)
Registered as the meson test 'reproduce-cli' (suite 'docs').
"""

import os
import re
import subprocess
import sys


def section(text, heading):
    """The Markdown section under `heading`, up to the next heading of its level."""
    start = text.find(heading)
    if start < 0:
        return ""
    end = text.find("\n## ", start + len(heading))
    return text[start:end if end >= 0 else len(text)]


def minutes(text, where):
    found = set(re.findall(r"about (\d+) minutes", text))
    return found, f"{where} says about {', '.join(sorted(found)) or '?'} minutes"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))
    script = os.path.join(root, "tools", "reproduce")
    problems = []
    help_run = subprocess.run([script, "--help"], capture_output=True, text=True, timeout=30)
    if help_run.returncode != 0:
        problems.append(f"--help exited {help_run.returncode}: {help_run.stderr.strip()}")
    text = re.sub(r"\s+", " ", help_run.stdout)
    for needed in ["--list", "builds build/", "build/reproduce"]:
        if needed not in text:
            problems.append(f"--help does not say {needed!r}")
    bogus = subprocess.run([script, "--bogus"], capture_output=True, text=True, timeout=30)
    if bogus.returncode != 2 or "unknown option '--bogus'" not in bogus.stderr:
        problems.append(f"--bogus: exit {bogus.returncode}, {bogus.stderr.strip()!r}")
    # --trace changes how comparisons run (binder-ab --trace): with no comparison to run it is
    # refused, not ignored.
    for argv in (["--trace"], ["--trace", "--calibrate", "alloc-lock"], ["--list", "--trace"]):
        run = subprocess.run([script] + argv, capture_output=True, text=True, timeout=30)
        if run.returncode != 2 or "--trace goes with NAME" not in run.stderr:
            problems.append(f"{' '.join(argv)}: exit {run.returncode}, {run.stderr.strip()!r}")
    if "--trace NAME" not in text:
        problems.append("--help does not say '--trace NAME'")
    stated = {}
    for where, text in [("tools/reproduce --help", help_run.stdout),
                        ("README.md", section(open(os.path.join(root, "README.md")).read(),
                                              "## The published results")),
                        ("docs/reproductions.md",
                         open(os.path.join(root, "docs", "reproductions.md")).read())]:
        stated[where] = minutes(re.sub(r"\s+", " ", text), where)
    for where, (found, _) in stated.items():
        if not found:
            problems.append(f"{where} states no duration ('about N minutes')")
    values = set().union(*(found for found, _ in stated.values()))
    if len(values) != 1:
        problems.append("durations disagree: " + "; ".join(line for _, line in stated.values()))
    for problem in problems:
        print(f"reproduce-cli: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
