#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""docs/variants.md's "Adding a design" names only files that exist (issue 44 point 5).

The section is a worked example: the commit that added `alloc_lock=upstream` and the files a new
allocator design touches. This check reads every backquoted path in the section (a token with a
slash and no spaces: `core/alloc/designs/upstream.h`, `tools/dev/tsan-stress`) and fails for one
that is not in the source tree. In a git checkout it also checks that the commit the section
cites exists and adds the design files it names, so a rewritten history cannot leave the
example pointing nowhere.

Prints what is missing and exits 1; exits 0 when everything is there.

Usage: variants_adding_design.py [SOURCE_ROOT]   (default: the directory above this script)
Registered as the meson test 'variants-adding-design' (suite 'docs').
"""

import os
import re
import subprocess
import sys

SECTION = "## Adding a design"
PATH = re.compile(r"`([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+)`")
COMMIT = re.compile(r"commit ([0-9a-f]{7,40})\b")


def section_text(doc):
    """The lines of `doc` from SECTION up to the next heading of the same level."""
    lines = doc.splitlines()
    start = lines.index(SECTION)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return "\n".join(lines[start:end])


def missing_paths(root, text):
    return sorted({p for p in PATH.findall(text) if not os.path.exists(os.path.join(root, p))})


def commit_problems(root, text):
    """What is wrong with the cited commit; nothing outside a git checkout."""
    if not os.path.exists(os.path.join(root, ".git")):
        return []
    commits = COMMIT.findall(text)
    if not commits:
        return ["the section cites no commit"]
    problems = []
    for commit in commits:
        shown = subprocess.run(["git", "-C", root, "show", "--name-only", "--format=", commit],
                               capture_output=True, text=True, check=False)
        if shown.returncode != 0:
            problems.append(f"commit {commit} is not in the repository")
            continue
        changed = set(shown.stdout.split())
        for path in PATH.findall(text):
            if path.startswith("core/alloc/designs/upstream") and path not in changed:
                problems.append(f"commit {commit} does not touch {path}")
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))
    with open(os.path.join(root, "docs", "variants.md"), encoding="utf-8") as doc:
        text = section_text(doc.read())
    problems = [f"docs/variants.md '{SECTION}' names {p}, which does not exist"
                for p in missing_paths(root, text)]
    problems += commit_problems(root, text)
    if not PATH.findall(text):
        problems.append("the section names no file")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
