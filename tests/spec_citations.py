#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Every citation of the behaviour contract must resolve inside the repository.

Collects the spec ids cited in the git-tracked files (S4.5 in prose and comments, _S4_5 in test
names) and checks that docs/spec.md has an entry ("### S4.5 — title") for each; checks that every
"docs/design.md section N" (and the older spelling "DESIGN.md section N") names a section
("## N. title") of docs/design.md. Prints what does not resolve and exits 1.

Usage: spec_citations.py [SOURCE_ROOT]   (default: the directory above this script)
Registered as the meson test 'spec-citations' (suite 'docs').
"""

import os
import re
import subprocess
import sys

SPEC = "docs/spec.md"
DESIGN = "docs/design.md"

# S4.5, S3.1a; not S3 alone (a section), not inside a longer token (no letter, digit or dot
# before it, no digit after).
DOTTED_ID = re.compile(r"(?<![A-Za-z0-9_.])S(\d+)\.(\d+)([a-z]?)(?![0-9A-Za-z])")
# The form test names use: Fixture.Name_S4_5_S9_9, BinderfsTest.S1_1_TwoOpens...
UNDERSCORE_ID = re.compile(r"(?<![A-Za-z0-9])S(\d+)_(\d+)(?![0-9])")
SPEC_ENTRY = re.compile(r"^### (S\d+\.\d+[a-z]?) — \S", re.MULTILINE)
DESIGN_SECTION = re.compile(r"^## (\d+[a-z]?)\. \S", re.MULTILINE)
# "docs/design.md section 4", "sections 5 and 6", "section 2b", also when a comment wraps
# between the file name and "section" (// or # or * at the start of the next line).
SECTION_LIST = r"(\d+[a-z]?(?:(?:\s*,\s*|\s+and\s+|\s*&\s*|\s+or\s+)\d+[a-z]?)*)"
DESIGN_CITATION = re.compile(
    r"(docs/design\.md|(?<![\w/])DESIGN\.md)(?:\s|//|#|\*)*sections?\s+" + SECTION_LIST)
SECTION_NUMBER = re.compile(r"\d+[a-z]?")


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True,
                             capture_output=True).stdout
        return [p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        # Not a git checkout (a release tarball): every file but the build and dependency dirs.
        files = []
        for dirpath, dirnames, filenames in os.walk(root):
            rel = os.path.relpath(dirpath, root)
            dirnames[:] = [d for d in dirnames
                           if not (d.startswith(".") or (rel == "." and d.startswith("build")))]
            files += [os.path.normpath(os.path.join(rel, f)) for f in filenames]
        return files


# core's sources, as the tree checks of core (core_layering.py, core_purity.py) read them.
CORE_SOURCE_SUFFIXES = (".h", ".cc", ".in")


def core_sources(root):
    return sorted(p for p in tracked_files(root)
                  if p.startswith("core/") and p.endswith(CORE_SOURCE_SUFFIXES))


def skipped(path):
    top = path.split("/", 1)[0]
    return path == SPEC or top == ".deps" or top.startswith("build")


def read_text(root, path):
    try:
        with open(os.path.join(root, path), encoding="utf-8") as f:
            return f.read()
    except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
        return None


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))

    spec_text = read_text(root, SPEC)
    design_text = read_text(root, DESIGN)
    if spec_text is None or design_text is None:
        print(f"spec-citations: {SPEC} or {DESIGN} is missing under {root}")
        return 1
    entries = set(SPEC_ENTRY.findall(spec_text))
    sections = set(DESIGN_SECTION.findall(design_text))

    cited = {}  # id -> [(path, line)]
    missing_sections = []  # (path, line, citation, section)
    legacy = 0
    files = 0
    for path in tracked_files(root):
        if skipped(path):
            continue
        text = read_text(root, path)
        if text is None:
            continue
        files += 1
        for regex in (DOTTED_ID, UNDERSCORE_ID):
            for m in regex.finditer(text):
                sid = "S%s.%s" % m.group(1, 2) + (m.group(3) if regex is DOTTED_ID else "")
                cited.setdefault(sid, []).append((path, line_of(text, m.start())))
        for m in DESIGN_CITATION.finditer(text):
            if m.group(1) == "DESIGN.md":
                legacy += 1
            for number in SECTION_NUMBER.findall(m.group(2)):
                if number not in sections:
                    missing_sections.append((path, line_of(text, m.start()),
                                             " ".join(m.group(0).split()), number))

    # docs/spec.md's own cross-references must resolve too (its headings do not count as
    # citations).
    spec_refs = {}
    for number, line in enumerate(spec_text.split("\n"), 1):
        if SPEC_ENTRY.match(line):
            continue
        for regex in (DOTTED_ID, UNDERSCORE_ID):
            for m in regex.finditer(line):
                sid = "S%s.%s" % m.group(1, 2) + (m.group(3) if regex is DOTTED_ID else "")
                spec_refs.setdefault(sid, []).append((SPEC, number))
    for m in DESIGN_CITATION.finditer(spec_text):
        for number in SECTION_NUMBER.findall(m.group(2)):
            if number not in sections:
                missing_sections.append((SPEC, line_of(spec_text, m.start()),
                                         " ".join(m.group(0).split()), number))

    failed = False
    for sid in sorted(set(cited) | set(spec_refs), key=sort_key):
        if sid in entries:
            continue
        failed = True
        places = cited.get(sid, []) + spec_refs.get(sid, [])
        shown = ", ".join(f"{p}:{n}" for p, n in places[:5])
        more = f" (+{len(places) - 5} more)" if len(places) > 5 else ""
        print(f"{sid}: cited but has no entry in {SPEC}: {shown}{more}")
    for path, line, citation, number in missing_sections:
        failed = True
        print(f"{path}:{line}: '{citation}': {DESIGN} has no section {number}")

    if failed:
        return 1
    note = f"; {legacy} still spelled DESIGN.md" if legacy else ""
    print(f"spec-citations: {len(cited)} spec ids cited in {files} files, each has an entry in "
          f"{SPEC} ({len(entries)} entries); design.md section citations resolve{note}")
    return 0


def sort_key(sid):
    major, minor = sid[1:].split(".")
    digits = re.match(r"\d+", minor).group(0)
    return (int(major), int(digits), minor[len(digits):])


if __name__ == "__main__":
    sys.exit(main())
