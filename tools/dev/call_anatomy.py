#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Where a deferred binder call's time goes (issue 30 point 1): docs/performance.md's anatomy.

Runs bench-transport's deferred-call loop on one CPU (every hop a context switch on that CPU, so
the CPU time per call is the call's time on a quiet machine) under `perf stat` (context switches
and system calls per call) and `perf record -g` with a fixed period of CPU time (where the time
goes), and prints one table per transport: each step's share of the samples and the CPU
microseconds per call it stands for (samples x period / calls, so other load on the CPU does
not count), split by who spends it (the daemon's threads or the two programs). Threads with
under 1 % of the samples (the benchmark's setup, its other loops' servers) are left out.

Usage: call_anatomy.py [--bench PATH] [--iterations N] [--mode run|classic|both] [--keep DIR]
       call_anatomy.py --classify PERF_SCRIPT_TEXT DAEMON_PID CALLS   (the classifier alone)
"""

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

# Steps, first match wins, tried on a sample's kernel frames (leaf first) and then its leaf
# user-space symbol. Each is (name, predicate on the list of frame symbols).
SWITCH_FRAMES = ("__schedule", "schedule", "finish_task_switch")


def has(frames, *names):
    return any(f == n or f.startswith(n + ".") for f in frames for n in names)


def classify(frames):
    """The step a sample (its symbols, leaf first) belongs to."""
    kernel = [f for f in frames if not f.startswith("[user]")]
    user = [f[len("[user]"):] for f in frames if f.startswith("[user]")]
    if kernel:
        if has(kernel, *SWITCH_FRAMES):
            return "thread switch (schedule, wake-up)"
        if has(kernel, "__x64_sys_process_vm_readv", "__x64_sys_process_vm_writev"):
            return "remote access (process_vm_readv/writev)"
        if has(kernel, "seccomp_do_user_notification", "__seccomp_filter"):
            return "seccomp: the caller's notification"
        if has(kernel, "seccomp_notify_ioctl"):
            return "seccomp: listener ioctls (RECV, SEND, ID_VALID)"
        if has(kernel, "fuse_dev_read", "fuse_dev_write", "fuse_dev_do_read", "fuse_dev_do_write",
               "fuse_simple_request", "fuse_file_ioctl", "fuse_do_ioctl"):
            return "FUSE: request and answer"
        if has(kernel, "__x64_sys_poll", "__x64_sys_ppoll"):
            return "poll (receive turns)"
        if has(kernel, "__x64_sys_ioctl"):
            return "ioctl entry (file lookup, LSM)"
        for f in kernel:
            m = re.match(r"__x64_sys_(\w+)", f)
            if m:
                return f"other system calls ({m.group(1)})"
        return "system call entry and exit"
    leaf = user[0] if user else ""
    if re.search(r"\b(malloc|free|cfree|_int_malloc|_int_free|operator new|operator delete)\b",
                 leaf):
        return "heap (malloc/free)"
    if "cused::core::alloc::" in leaf:
        return "engine: buffer allocator"
    if "cused::sync::" in leaf or "PolicyMutex" in leaf or "AllocLock" in leaf or "AllocSpinLock" in leaf:
        return "engine: locks"
    if "cused::core::" in leaf:
        return "engine: protocol (core)"
    if re.search(r"cused::(run|host|binderfs|request|fuse)|cused::ThreadGroups|fuse_", leaf):
        return "frontend (cused/)"
    if "cused::client::" in leaf or "call_round_trips" in leaf:
        return "the programs' own code (client library)"
    if re.search(r"mem(cpy|set|move)|__memset|__memmove", leaf):
        return "memcpy/memset"
    return "other user space (C++ library, libc)"


def parse_samples(text):
    """(pid, tid, [frames leaf first]) per sample of `perf script -F pid,tid,ip,sym,dso`."""
    sample = None
    for line in text.splitlines():
        if not line.strip():
            if sample:
                yield sample
            sample = None
            continue
        if not line.startswith(("\t", " " * 8)) and sample is None:
            head = line.split()
            pid, tid = head[0].split("/") if "/" in head[0] else (head[0], head[0])
            sample = (int(pid), int(tid), [])
            continue
        if sample is None:
            continue
        parts = line.strip().split(None, 1)
        if len(parts) < 2:
            continue
        rest = parts[1]
        dso = re.search(r"\(([^)]*)\)\s*$", rest)
        sym = re.sub(r"\+0x[0-9a-f]+", "", re.sub(r"\s*\([^)]*\)\s*$", "", rest)).strip()
        kernel = dso is not None and "kernel" in dso.group(1)
        sample[2].append(sym if kernel else "[user]" + sym)
    if sample:
        yield sample


def anatomy(text, daemon_pid, calls, us_per_call=None, period_us=None):
    """Rows (step, who, share, µs per call) over the samples of the threads that ran the calls,
    and the samples counted. The µs per call: `us_per_call` given, or samples x `period_us` /
    `calls`."""
    samples = list(parse_samples(text))
    per_thread = collections.Counter(tid for _, tid, _ in samples)
    busy = {tid for tid, n in per_thread.items() if n >= 0.01 * len(samples)}
    counts = collections.Counter()
    total = 0
    for pid, tid, frames in samples:
        if tid not in busy:
            continue
        who = "daemon" if pid == daemon_pid else "programs"
        counts[(classify(frames), who)] += 1
        total += 1
    if us_per_call is None:
        us_per_call = total * period_us / calls
    rows = []
    for (step, who), n in counts.most_common():
        share = n / total if total else 0.0
        rows.append((step, who, share, share * us_per_call))
    return rows, total, us_per_call


def print_table(title, rows, total, us_per_call, stats, wall_us=None):
    wall = f" (the benchmark timed {wall_us:.1f} µs)" if wall_us else ""
    print(f"\n### {title}: {us_per_call:.1f} µs of CPU per deferred call{wall}, {total} samples")
    if stats:
        print("per call: " + ", ".join(f"{v:.2f} {k}" for k, v in stats.items()))
    print("\n| step | spent by | share | µs per call |\n|---|---|---:|---:|")
    for step, who, share, us in rows:
        if share >= 0.005:
            print(f"| {step} | {who} | {100 * share:.1f} % | {us:.2f} |")
    rest = sum(share for _, _, share, _ in rows if share < 0.005)
    if rest:
        print(f"| (steps under 0.5 % each) | | {100 * rest:.1f} % | {rest * us_per_call:.2f} |")


STAT_EVENTS = ["context-switches", "syscalls:sys_enter_ioctl", "syscalls:sys_enter_read",
               "syscalls:sys_enter_writev", "syscalls:sys_enter_process_vm_readv",
               "syscalls:sys_enter_process_vm_writev", "syscalls:sys_enter_poll"]


def bench_command(bench, mode, iterations):
    only = "run-defer" if mode == "run" else "defer"
    return ["taskset", "-c", "0", bench, "--rounds", "1", "--iterations", str(iterations),
            "--no-io-uring", "--only", only]


def calls_of(iterations):
    return iterations + iterations // 10  # bench-transport's warm-up calls run too


def per_call_stats(bench, mode, iterations, workdir):
    out = os.path.join(workdir, f"stat-{mode}.txt")
    subprocess.run(["perf", "stat", "-x", ",", "-o", out, "-e", ",".join(STAT_EVENTS), "--"] +
                   bench_command(bench, mode, iterations), check=True,
                   stdout=subprocess.DEVNULL)
    stats = {}
    for line in open(out):
        fields = line.strip().split(",")
        if len(fields) > 2 and fields[0].replace(".", "").isdigit():
            name = fields[2].replace("syscalls:sys_enter_", "")
            stats[name] = float(fields[0]) / calls_of(iterations)
    return stats


def defer_us(output, mode):
    """bench-transport's deferred-call µs from its table row for `mode`."""
    for line in output.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 7 and cells[1] == mode:
            return float(cells[7])
    raise SystemExit(f"call_anatomy: no {mode} row in bench-transport's output:\n{output}")


PERIOD_NS = 100000  # a sample every 100 µs of CPU time: more often slows the calls down


def record(bench, mode, iterations, workdir):
    data = os.path.join(workdir, f"perf-{mode}.data")
    bench_cmd = bench_command(bench, mode, iterations)
    run = subprocess.run(["perf", "record", "-e", "cpu-clock", "-c", str(PERIOD_NS), "-g", "-o",
                          data, "--"] + bench_cmd,
                         check=True, capture_output=True, text=True)
    us = defer_us(run.stdout, mode)
    script = subprocess.run(["perf", "script", "-i", data, "-F", "pid,tid,ip,sym,dso"],
                            check=True, capture_output=True, text=True).stdout
    # The daemon is the benchmark's own process, the only one with threads of its own (the
    # programs are single-threaded children).
    pids = collections.Counter(pid for pid, tid, _ in parse_samples(script) if pid != tid)
    daemon = pids.most_common(1)[0][0] if pids else 0
    return script, daemon, us


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", default="build/tests/bench/bench-transport")
    parser.add_argument("--iterations", type=int, default=20000)
    parser.add_argument("--mode", choices=["run", "classic", "both"], default="both")
    parser.add_argument("--keep", help="keep perf's data and stat files in this directory")
    parser.add_argument("--classify", nargs=3, metavar=("SCRIPT", "DAEMON_PID", "US_PER_CALL"))
    args = parser.parse_args()
    if args.classify:
        path, pid, us = args.classify
        rows, total, us = anatomy(open(path).read(), int(pid), 0, us_per_call=float(us))
        print_table(path, rows, total, us, {})
        return
    workdir = args.keep or tempfile.mkdtemp(prefix="call-anatomy-")
    os.makedirs(workdir, exist_ok=True)
    modes = ["run", "classic"] if args.mode == "both" else [args.mode]
    for mode in modes:
        print(f"call-anatomy: {mode}: perf stat, then perf record -g "
              f"({args.iterations} calls on CPU 0 each)", file=sys.stderr, flush=True)
        stats = per_call_stats(args.bench, mode, args.iterations, workdir)
        script, daemon, wall_us = record(args.bench, mode, args.iterations, workdir)
        rows, total, us = anatomy(script, daemon, calls_of(args.iterations),
                                  period_us=PERIOD_NS / 1000)
        title = "cused run (seccomp user notification)" if mode == "run" else "FUSE (classic)"
        print_table(title, rows, total, us, stats, wall_us)
    if not args.keep:
        subprocess.run(["rm", "-rf", workdir], check=False)


if __name__ == "__main__":
    main()
