#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Every source file of cused's own says its licence in its first lines: GPL-2.0-only, the licence
of the driver cused emulates (LICENSE, debian/copyright, docs/install.md).

Usage: license_headers.py REPO [--add]

Source files: C and C++ (.c, .cc, .h), Python, shell, meson files, and every other file that starts
with '#!'. Not: the differential corpus and the docs (data and prose), debian/ (debian/copyright
covers it) and patches. --add writes the line where it is missing (after a '#!' line).
"""
import os
import subprocess
import sys

LINE = "SPDX-License-Identifier: GPL-2.0-only"
SKIP_PREFIXES = ("tests/diff/corpus/", "docs/", "debian/")
C_LIKE = (".c", ".cc", ".h")
HASH_LIKE = (".py", ".sh")
HASH_NAMES = ("meson.build", "meson_options.txt")


def tracked_files(repo):
    try:
        out = subprocess.run(["git", "-C", repo, "ls-files"], check=True, capture_output=True,
                             text=True).stdout
        return [path for path in out.splitlines() if os.path.isfile(os.path.join(repo, path))]
    except (OSError, subprocess.CalledProcessError):
        found = []
        for root, dirs, files in os.walk(repo):
            dirs[:] = [d for d in dirs if not d.startswith((".", "build", "obj-"))]
            found += [os.path.relpath(os.path.join(root, name), repo) for name in files]
        return found


def comment_of(repo, path):
    """The comment marker the file's language uses, or None when it is not a source file."""
    if path.startswith(SKIP_PREFIXES) or path.endswith(".patch"):
        return None
    if path.endswith(C_LIKE):
        return "//"
    if path.endswith(HASH_LIKE) or os.path.basename(path) in HASH_NAMES:
        return "#"
    with open(os.path.join(repo, path), "rb") as source:
        return "#" if source.read(2) == b"#!" else None


def main():
    repo = sys.argv[1]
    add = "--add" in sys.argv[2:]
    missing = []
    checked = 0
    for path in sorted(tracked_files(repo)):
        marker = comment_of(repo, path)
        if marker is None:
            continue
        checked += 1
        full = os.path.join(repo, path)
        with open(full, encoding="utf-8") as source:
            lines = source.readlines()
        if any(LINE in line for line in lines[:3]):
            continue
        if not add:
            missing.append(path)
            continue
        at = 1 if lines and lines[0].startswith("#!") else 0
        lines.insert(at, f"{marker} {LINE}\n")
        with open(full, "w", encoding="utf-8") as source:
            source.writelines(lines)
    for path in missing:
        print(f"{path}: no '{LINE}' line in its first three lines")
    print(f"license-headers: {checked} source files, {len(missing)} without the line")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
