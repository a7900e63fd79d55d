#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""tools/dev/call_anatomy.py's classifier (issue 30 point 1) on perf script samples written the way
`perf script -F pid,tid,ip,sym,dso` prints them: each sample lands in the step its frames say
(a switch inside a listener ioctl is a switch, a process_vm_readv is a remote access, a leaf in
core is the engine), the daemon's samples are told from the programs', and the shares add up
to the microseconds per call. Prints what is wrong and exits 1.

Usage: call_anatomy_test.py [SOURCE_ROOT]   (meson test 'call-anatomy', suite 'docs')
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tool_module import load_tool  # noqa: E402

anatomy = load_tool("call_anatomy")
problems = []


def sample(pid, tid, *frames):
    """A sample's text: frames leaf first, (k) for a kernel symbol, else a user one."""
    lines = [f" {pid}/{tid}  "]
    for i, frame in enumerate(frames):
        kernel = frame.endswith("(k)")
        sym = frame[:-3] if kernel else frame
        dso = "[kernel.kallsyms]" if kernel else "/build/tests/bench/bench-transport"
        lines.append(f"\t{0xffffffff81000000 + i:x} {sym}+0x1a ({dso})")
    return "\n".join(lines) + "\n\n"


DAEMON, PROGRAM = 100, 200
CASES = [
    # (expected step, who, sample)
    ("thread switch (schedule, wake-up)", "daemon",
     sample(DAEMON, 101, "finish_task_switch.isra.0(k)", "__schedule(k)", "schedule(k)",
            "recv_wait_event(k)", "seccomp_notify_ioctl(k)", "__x64_sys_ioctl(k)",
            "do_syscall_64(k)", "__GI___ioctl")),
    ("seccomp: listener ioctls (RECV, SEND, ID_VALID)", "daemon",
     sample(DAEMON, 101, "_raw_spin_unlock_irqrestore(k)", "seccomp_notify_ioctl(k)",
            "__x64_sys_ioctl(k)", "do_syscall_64(k)")),
    ("remote access (process_vm_readv/writev)", "daemon",
     sample(DAEMON, 102, "follow_page_pte(k)", "pin_user_pages_remote(k)", "process_vm_rw(k)",
            "__x64_sys_process_vm_readv(k)", "do_syscall_64(k)", "process_vm_readv")),
    ("seccomp: the caller's notification", "programs",
     sample(PROGRAM, PROGRAM, "seccomp_do_user_notification.isra.0(k)", "__seccomp_filter(k)",
            "syscall_trace_enter(k)", "do_syscall_64(k)")),
    ("engine: protocol (core)", "daemon",
     sample(DAEMON, 101, "cused::core::Proc::transact(cused::core::Thread&)")),
    ("engine: buffer allocator", "daemon",
     sample(DAEMON, 101, "cused::core::alloc::RangeAlloc::take(unsigned long)")),
    ("heap (malloc/free)", "daemon", sample(DAEMON, 101, "malloc")),
    ("the programs' own code (client library)", "programs",
     sample(PROGRAM, PROGRAM, "cused::client::IpcThread::talk(bool)")),
    ("poll (receive turns)", "daemon",
     sample(DAEMON, 101, "do_sys_poll(k)", "__x64_sys_poll(k)", "do_syscall_64(k)")),
    ("other system calls (futex)", "daemon",
     sample(DAEMON, 101, "futex_wake(k)", "__x64_sys_futex(k)", "do_syscall_64(k)")),
]

for expected, who, text in CASES:
    (pid, _tid, frames), = anatomy.parse_samples(text)
    got = anatomy.classify(frames)
    if got != expected:
        problems.append(f"{frames[:3]}...: {got!r}, expected {expected!r}")
    if (pid == DAEMON) != (who == "daemon"):
        problems.append(f"pid {pid} is not the {who}'s")

# The table: 10 samples, 2 of them remote accesses, at 30 µs a call -> 20 % and 6 µs.
text = "".join(t for _, _, t in CASES)
rows, total, us = anatomy.anatomy(text, DAEMON, 1000, us_per_call=30.0)
if total != len(CASES):
    problems.append(f"{total} samples parsed, expected {len(CASES)}")
if abs(sum(us for *_, us in rows) - 30.0) > 1e-9:
    problems.append(f"the rows add up to {sum(us for *_, us in rows)} µs, not 30")
by_step = {(step, who): (share, us) for step, who, share, us in rows}
share, us = by_step.get(("remote access (process_vm_readv/writev)", "daemon"), (0, 0))
if abs(share - 0.1) > 1e-9 or abs(us - 3.0) > 1e-9:
    problems.append(f"remote access: {share} of the samples, {us} µs; expected 0.1 and 3.0")

# Without a given time per call: samples x period / calls (10 samples of 20 µs over 4 calls).
_, _, us = anatomy.anatomy(text, DAEMON, 4, period_us=20.0)
if abs(us - 50.0) > 1e-9:
    problems.append(f"{us} µs per call from 10 samples of 20 µs over 4 calls, expected 50")

# bench-transport's table row gives the µs per deferred call (column 7), per mode.
row = ("| run | 6.8 | 6.0 | 10.6 | 1.75 | 57.6 | 40.6 | 4.78 | 3.37 | 5.98 | 1.90 | 4.00 | 19.7 "
       "| 2.06 |\n")
if anatomy.defer_us(row, "run") != 40.6:
    problems.append(f"defer_us read {anatomy.defer_us(row, 'run')} from {row!r}")

for problem in problems:
    print(problem)
sys.exit(1 if problems else 0)
