# SPDX-License-Identifier: GPL-2.0-only
"""A tools/dev/NAME.py script loaded as a module, for the tests of its functions (suite docs)."""

import importlib.util
import os
import sys


def source_root():
    """The tree the test checks: its first argument, else the directory above tests/."""
    return sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))


def load_tool(name):
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(source_root(), "tools", "dev", name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
