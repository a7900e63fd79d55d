#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""core's layering picture (docs/design.md section 1), checked: every file under core/ belongs to
one layer, and includes only headers of its own layer or of layers below it, uapi/ and system
headers. Inside a layer, the concepts (a file's name without its extension) include each other
without a cycle. A new file under core/ must be placed in a layer here.

Usage: core_layering.py SOURCE_ROOT
"""
import fnmatch
import pathlib
import re
import sys

from spec_citations import core_sources

# Bottom to top. A pattern is matched against the path relative to the source root.
LAYERS = [
    ("sync", ["core/sync/*"]),
    # Plain values and the interfaces a host implements: they know no engine object.
    ("values", [
        "core/align.h", "core/block_pool.h", "core/buffer_file.h", "core/client_mapping.h", "core/completion.h",
        "core/ioctl_argument.*", "core/locks.h", "core/passed_files.h", "core/prefetched_memory.*",
        "core/protocol_features.h", "core/security.*", "core/stats.*", "core/thread_priority.h",
        "core/timer.h", "core/lock_trace.*", "core/traced_mutex.h", "core/trace_events.*", "core/trace_event_names.h", "core/transaction_log.*", "core/user_memory.h", "core/user_reader.*",
        "core/version.h.in", "core/work.*",
    ]),
    ("alloc", ["core/alloc/*"]),
    ("variant", ["core/device_options.h", "core/device_variant.*"]),
    # The kernel's globals: ids, the procs of every device (by pid), the page LRU, stats, logs.
    ("driver", ["core/driver.*"]),
    ("device", ["core/device.*"]),
    # The objects a proc owns, and the wake-ups that resume its reads (through ReadResumer).
    ("objects", [
        "core/freeze.h", "core/freeze_notification.h", "core/node.*", "core/ref.*",
        "core/ref_table.*", "core/thread.*", "core/transaction.h", "core/wake.*",
    ]),
    # binder_proc and the protocol engine that runs on it, split by concept.
    ("proc", [
        "core/proc.*", "core/txn_plan.h", "core/command.cc", "core/death.cc", "core/freeze.cc",
        "core/freeze_notification.cc", "core/ioctl.cc", "core/passed_files.cc",
        "core/priority.cc", "core/android_priority.cc", "core/read.cc", "core/refcount.cc", "core/release.cc",
        "core/transaction.cc", "core/translate.cc",
    ]),
    # What reads everything: binder_logs and the invariant checker.
    ("observers", ["core/debug_print.*", "core/invariants.*"]),
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def layer_of(path):
    for index, (name, patterns) in enumerate(LAYERS):
        if any(fnmatch.fnmatch(path, pattern) for pattern in patterns):
            return index
    return None


def concept_of(path):
    return path.split(".", 1)[0]


def find_cycle(graph):
    """A list of nodes forming a cycle in `graph` ({node: set(nodes)}), or None."""
    state = {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt, stack)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node, [])
            if cycle:
                return cycle
    return None


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    files = core_sources(str(root))
    problems = []
    same_layer = {}
    for path in files:
        layer = layer_of(path)
        if layer is None:
            problems.append(f"{path}: in no layer of tests/core_layering.py: place it")
            continue
        text = (root / path).read_text()
        for included in INCLUDE.findall(text):
            if included.startswith("uapi/") or included == "core/version.h":
                continue
            if not included.startswith("core/"):
                continue  # core_purity.py's rule: core includes only core/ and uapi/
            target = layer_of(included)
            if target is None:
                continue  # reported as its own file
            if target > layer:
                problems.append(f"{path} ({LAYERS[layer][0]}) includes {included} "
                                f"({LAYERS[target][0]}): a back edge")
            elif target == layer and concept_of(included) != concept_of(path):
                same_layer.setdefault(concept_of(path), set()).add(concept_of(included))
    cycle = find_cycle(same_layer)
    if cycle:
        problems.append("concepts include each other in a cycle: " + " -> ".join(cycle))
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f"core layering OK: {len(files)} files in {len(LAYERS)} layers, no back edge")
    return 0


if __name__ == "__main__":
    sys.exit(main())
