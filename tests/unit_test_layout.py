#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The unit tests of core mirror its concepts: tests/unit/core/<name>_test.cc tests core/<name>.

Checks that every tests/unit/core/*_test.cc names a core concept, a core/<name>.h or
core/<name>.cc, apart from the engine-wide suites listed below (docs/design.md section 7), and
that tests/unit/core/meson.build builds every one of them. Prints what is wrong and exits 1.

Usage: unit_test_layout.py [SOURCE_ROOT]   (default: the directory above this script)
Registered as the meson test 'unit-test-layout' (suite 'docs').
"""

import os
import re
import sys

TESTS = "tests/unit/core"
# Suites that exercise the whole engine rather than one concept's rule.
ENGINE_WIDE = {
    "allocation_count": "heap allocations of steady-state calls through the whole engine",
    "random": "randomised command streams against the whole engine",
    "stress": "threads of several procs issuing ioctls at once",
}


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))
    test_dir = os.path.join(root, TESTS)
    meson = open(os.path.join(test_dir, "meson.build"), encoding="utf-8").read()
    built = set(re.findall(r"'([\w]+_test\.cc)'", meson))
    problems = []
    names = sorted(f for f in os.listdir(test_dir) if f.endswith("_test.cc"))
    for file in names:
        concept = file[:-len("_test.cc")]
        if concept in ENGINE_WIDE:
            pass
        elif not any(os.path.exists(os.path.join(root, "core", concept + ext))
                     for ext in (".h", ".cc")):
            problems.append(f"{TESTS}/{file}: no core/{concept}.h or core/{concept}.cc; name it "
                            f"after the core concept whose rules it tests, or list it in "
                            f"ENGINE_WIDE of tests/unit_test_layout.py (and docs/design.md "
                            f"section 7)")
        if file not in built:
            problems.append(f"{TESTS}/{file}: not built by {TESTS}/meson.build")
    for file in sorted(built - set(names)):
        problems.append(f"{TESTS}/meson.build: {file} does not exist")
    for concept in sorted(ENGINE_WIDE):
        if concept + "_test.cc" not in names:
            problems.append(f"tests/unit_test_layout.py: engine-wide suite {concept}_test.cc "
                            f"no longer exists; drop it from ENGINE_WIDE")
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f"{len(names)} test files in {TESTS}, each for a core concept or engine-wide "
          f"({', '.join(sorted(ENGINE_WIDE))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
