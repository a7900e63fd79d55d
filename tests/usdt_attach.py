#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""bpftrace on a running daemon with no trace being written (issue 32 point 3, docs/tracing.md
"USDT probes"): attaching raises the probes' semaphores, the daemon says it feeds the probes, and
bpftrace counts the transactions of a binder-throughput run, one binder_transaction per call and
per reply; once bpftrace has gone, the daemon says so and tracing is off again.

Usage: usdt_attach.py CUSED SERVICEMANAGER BINDER_THROUGHPUT
Needs root and a kernel that runs BPF programs; exits 77 (skipped) where bpftrace cannot run one
at all, and fails otherwise.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

WORKERS, ITERATIONS = 2, 200


class Lines:
    """A child's merged output, read as it comes, with a wait for a line."""

    def __init__(self, args):
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True)
        self.lines, self.cond = [], threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.lines.append(None)
            self.cond.notify_all()

    def wait_for(self, pattern, seconds):
        deadline = time.monotonic() + seconds
        with self.cond:
            while True:
                for line in self.lines:
                    if line is not None and re.search(pattern, line):
                        return line
                if None in self.lines or time.monotonic() > deadline:
                    return None
                self.cond.wait(0.1)

    def text(self):
        with self.cond:
            return "\n".join(line for line in self.lines if line is not None)


def bpftrace_runs():
    probe = subprocess.run(["bpftrace", "-e", "BEGIN { exit(); }"], capture_output=True, text=True)
    return probe.returncode == 0, probe.stderr


def main():
    cused, servicemanager, throughput = sys.argv[1:4]
    if shutil.which("bpftrace") is None:
        print("usdt-attach: bpftrace is not installed (tools/bootstrap installs it)")
        return 1
    runs, why = bpftrace_runs()
    if not runs:
        print(f"usdt-attach: skipped: this kernel runs no BPF program for bpftrace:\n{why}")
        return 77
    mount = tempfile.mkdtemp(prefix="cused-usdt-")
    daemon = Lines([cused, "--mount", mount, "--foreground"])
    tracer = None
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(os.path.join(mount, "binder")):
            if time.monotonic() > deadline or daemon.process.poll() is not None:
                print("usdt-attach: the daemon did not mount:\n" + daemon.text())
                return 1
            time.sleep(0.05)
        script = (f"usdt:{cused}:cused:binder_transaction {{ @calls = count(); }} "
                  f"usdt:{cused}:cused:binder_transaction_received {{ @received = count(); }}")
        tracer = Lines(["bpftrace", "-p", str(daemon.process.pid), "-e", script])
        if tracer.wait_for(r"^Attaching \d+ probes", 30) is None:
            print("usdt-attach: bpftrace did not attach:\n" + tracer.text())
            return 1
        if daemon.wait_for(r"usdt: a tracer is attached", 10) is None:
            print("usdt-attach: the daemon never saw the raised semaphores:\n" + daemon.text())
            return 1
        device = os.path.join(mount, "binder")
        manager = subprocess.Popen([servicemanager, "--device", device])
        try:
            run = subprocess.run([throughput, "--device", device, "-w", str(WORKERS),
                                  "-i", str(ITERATIONS)], capture_output=True, text=True,
                                 timeout=120)
        finally:
            manager.terminate()
            manager.wait()
        if run.returncode != 0:
            print("usdt-attach: binder-throughput failed:\n" + run.stdout + run.stderr)
            return 1
        tracer.process.send_signal(signal.SIGINT)
        tracer.process.wait(timeout=30)
        tracer.wait_for(r"^@received", 5)
        counts = dict(re.findall(r"^@(\w+): (\d+)$", tracer.text(), re.M))
        calls = int(counts.get("calls", 0))
        received = int(counts.get("received", 0))
        # Each call and each reply is one binder_transaction; more come from the lookups.
        wanted = 2 * WORKERS * ITERATIONS
        print(f"usdt-attach: bpftrace counted {calls} binder_transaction and {received} "
              f"binder_transaction_received with no trace running (at least {wanted} each)")
        if calls < wanted or received < wanted:
            print(tracer.text())
            return 1
        if daemon.wait_for(r"usdt: no tracer is attached any more", 10) is None:
            print("usdt-attach: the daemon kept feeding after bpftrace left:\n" + daemon.text())
            return 1
        return 0
    finally:
        if tracer and tracer.process.poll() is None:
            tracer.process.kill()
        daemon.process.send_signal(signal.SIGTERM)
        try:
            daemon.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            daemon.process.kill()
        subprocess.run(["umount", "-l", mount], capture_output=True)
        shutil.rmtree(mount, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
