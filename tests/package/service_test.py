#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""cused.service without systemd (issue 21): runs the installed unit's commands the way systemd
would, and checks what a user of the unit relies on.

The unit file and its environment file are read from an installed tree (--root: `dpkg -x` of the
package, or a `meson install --destdir`); Environment=, then EnvironmentFile=, then --set give the
variables; ExecStartPre= runs, then ExecStart= with $NOTIFY_SOCKET on a datagram socket of this
test's (Type=notify). Checked: READY=1 arrives, and by then the mount is there with every device
of $CUSED_DEVICES, each link $CUSED_LINK_DIR/NAME points to it and answers BINDER_VERSION; the
unit's KillSignal= stops it within TimeoutStopSec= with status 0 and STOPPING=1, and cused itself
has unmounted and removed its links before ExecStopPost= runs. Then the same after a SIGKILL: the
ExecStopPost= lines clean up the stale mount and the dangling links.

By default the mount and the links go to a temporary directory (--set CUSED_MOUNT=...,
CUSED_LINK_DIR=...), so that the test never touches /dev; --system keeps the unit's own
/dev/binderfs and /dev.
"""
import argparse
import array
import fcntl
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time

BINDER_VERSION = 0xC0046209  # _IOWR('b', 9, struct binder_version)
BINDER_CURRENT_PROTOCOL_VERSION = 8


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def parse_unit(path):
    """[Section] -> list of (key, value), in order (Exec* keys repeat)."""
    sections, current = {}, None
    with open(path) as unit:
        lines = unit.read().replace("\\\n", " ").splitlines()
    for line in lines:
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], [])
            continue
        key, _, value = line.partition("=")
        current.append((key.strip(), value.strip()))
    return sections


def values(section, key):
    return [value for k, value in section if k == key]


def parse_environment_assignments(text):
    """Environment=: whitespace-separated KEY=VALUE words, each may be quoted."""
    return dict(word.split("=", 1) for word in shlex.split(text))


def parse_environment_file(path):
    """EnvironmentFile=: KEY=VALUE lines, # comments, quotes removed."""
    result = {}
    with open(path) as env:
        for line in env:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            key, _, value = line.partition("=")
            words = shlex.split(value, comments=False)
            result[key.strip()] = " ".join(words) if len(words) != 1 else words[0]
    return result


def expand(command, env):
    """systemd's rules: a word that is exactly $NAME becomes the value split at whitespace (zero or
    more words); ${NAME} anywhere in a word is replaced by the value as it is."""
    flags = ""
    while command and command[0] in "-@+!:":
        flags += command[0]
        command = command[1:]
    words = []
    for word in shlex.split(command):
        whole = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
        if whole:
            words += env.get(whole.group(1), "").split()
            continue
        words.append(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda m: env.get(m.group(1), ""),
                            word))
    return flags, words


def rooted(root, words):
    """The installed program under --root when it is there (cused), else the host's (mkdir)."""
    candidate = os.path.join(root, words[0].lstrip("/"))
    return [candidate if os.path.exists(candidate) else words[0]] + words[1:]


def run_commands(root, section, key, env):
    for line in values(section, key):
        flags, words = expand(line, env)
        command = rooted(root, words)
        result = subprocess.run(command, capture_output=True, text=True)
        print(f"  {key}: {' '.join(command)} -> {result.returncode}")
        check(result.returncode == 0 or "-" in flags,
              f"{key} {' '.join(words)} failed: {result.stderr}")


def mounted(path):
    with open("/proc/self/mountinfo") as mounts:
        for line in mounts:
            fields = line.split()
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
            if point == path:
                return fields[fields.index("-") + 1]  # the filesystem type
    return None


def binder_version(path):
    fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    try:
        version = array.array("i", [0])
        fcntl.ioctl(fd, BINDER_VERSION, version, True)
        return version[0]
    finally:
        os.close(fd)


def seconds(text, default):
    text = text.strip()
    if text.endswith("s"):
        text = text[:-1]
    return float(text) if text else default


class Notifications:
    """The socket systemd would listen on for sd_notify datagrams."""

    def __init__(self, directory):
        self.path = os.path.join(directory, "notify")
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.socket.bind(self.path)

    def wait_for(self, state, process, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            check(process.poll() is None, f"cused exited ({process.returncode}) before {state}")
            self.socket.settimeout(0.1)
            try:
                message = self.socket.recv(4096).decode()
            except socket.timeout:
                continue
            if state in message.split("\n"):
                return
        raise Failure(f"no {state} within {timeout} s")


def start(root, service, env, directory):
    run_commands(root, service, "ExecStartPre", env)
    (start_line,) = values(service, "ExecStart")
    _, words = expand(start_line, env)
    notifications = Notifications(directory)
    command = rooted(root, words)
    print(f"  ExecStart: {' '.join(command)}")
    process = subprocess.Popen(command, env=dict(os.environ, NOTIFY_SOCKET=notifications.path))
    try:
        check(values(service, "Type") == ["notify"], "the unit is not Type=notify")
        notifications.wait_for("READY=1", process, 15)
    except BaseException:
        process.kill()
        process.wait()
        raise
    return process, notifications


def check_serving(env):
    mount, links = env["CUSED_MOUNT"], env["CUSED_LINK_DIR"]
    fstype = mounted(mount)
    check(fstype is not None and fstype.startswith("fuse"), f"{mount} is not a FUSE mount")
    for name in env["CUSED_DEVICES"].split():
        name = name.split(":", 1)[0]
        link = os.path.join(links, name)
        check(os.path.islink(link) and os.readlink(link) == os.path.join(mount, name),
              f"{link} is not a link to {mount}/{name}")
        version = binder_version(link)
        check(version == BINDER_CURRENT_PROTOCOL_VERSION, f"BINDER_VERSION of {link}: {version}")
        print(f"  ready: {link} -> {os.readlink(link)}, BINDER_VERSION {version}")


def check_clean(env, what):
    mount, links = env["CUSED_MOUNT"], env["CUSED_LINK_DIR"]
    check(mounted(mount) is None, f"{what}: {mount} is still mounted")
    for name in env["CUSED_DEVICES"].split():
        link = os.path.join(links, name.split(":", 1)[0])
        check(not os.path.lexists(link), f"{what}: {link} is still there")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default="/", help="the installed tree")
    parser.add_argument("--unit", default="lib/systemd/system/cused.service",
                        help="the unit, relative to --root")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a variable over the environment file's (like a drop-in)")
    parser.add_argument("--system", action="store_true",
                        help="mount and link where the unit says (/dev/binderfs, /dev)")
    args = parser.parse_args()
    unit_path = os.path.join(args.root, args.unit)
    unit = parse_unit(unit_path)
    service = unit["Service"]
    with tempfile.TemporaryDirectory(prefix="cused-service-test-") as directory:
        env = {}
        for line in values(service, "Environment"):
            env.update(parse_environment_assignments(line))
        for line in values(service, "EnvironmentFile"):
            optional = line.startswith("-")
            path = os.path.join(args.root, line.lstrip("-").lstrip("/"))
            if os.path.exists(path):
                env.update(parse_environment_file(path))
            else:
                check(optional, f"EnvironmentFile {path} is missing")
        if not args.system:
            env["CUSED_MOUNT"] = os.path.join(directory, "binderfs")
            env["CUSED_LINK_DIR"] = os.path.join(directory, "dev")
            os.mkdir(env["CUSED_LINK_DIR"])
        env.update(parse_environment_assignments(" ".join(shlex.quote(s) for s in args.set)))
        print(f"{unit_path}: CUSED_MOUNT={env['CUSED_MOUNT']} CUSED_LINK_DIR={env['CUSED_LINK_DIR']}"
              f" CUSED_DEVICES={env['CUSED_DEVICES']!r} CUSED_OPTIONS={env.get('CUSED_OPTIONS', '')!r}")
        kill_signal = signal.Signals[(values(service, "KillSignal") or ["SIGTERM"])[0]]
        stop_timeout = seconds((values(service, "TimeoutStopSec") or ["90"])[0], 90)

        started = []  # whatever happens, nothing is left running or mounted
        try:
            print("a start and a stop with the unit's KillSignal:")
            process, notifications = start(args.root, service, env, directory)
            started.append(process)
            check_serving(env)
            process.send_signal(kill_signal)
            notifications.wait_for("STOPPING=1", process, stop_timeout)
            status = process.wait(timeout=stop_timeout)
            check(status == 0, f"cused exited with {status} on {kill_signal.name}")
            check_clean(env, f"after {kill_signal.name}, before ExecStopPost")
            print(f"  {kill_signal.name}: exit status 0, unmounted, links removed")
            run_commands(args.root, service, "ExecStopPost", env)
            check_clean(env, "after ExecStopPost")

            print("a start and a SIGKILL: ExecStopPost cleans up")
            os.unlink(notifications.path)
            process, _ = start(args.root, service, env, directory)
            started.append(process)
            check_serving(env)
            process.kill()
            process.wait()
            check(mounted(env["CUSED_MOUNT"]) is not None, "a killed cused left no mount to clean up")
            run_commands(args.root, service, "ExecStopPost", env)
            check_clean(env, "after SIGKILL and ExecStopPost")
            print("  SIGKILL: the stale mount and the dangling links are gone")
        finally:
            for process in started:
                if process.poll() is None:
                    process.kill()
                    process.wait()
            if mounted(env["CUSED_MOUNT"]) is not None:
                subprocess.run(["umount", "--lazy", env["CUSED_MOUNT"]])
    print("cused.service: 2 passed, 0 failed")


if __name__ == "__main__":
    try:
        main()
    except Failure as failure:
        print(f"cused.service: FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
