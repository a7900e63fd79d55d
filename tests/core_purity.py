#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""core/ makes no OS call of its own (issue 20, docs/design.md section 1).

core is the driver as a state machine: every system call belongs to the host layer (cused/host/),
behind a declaration or an interface core owns. This check scans every file under core/ for

* an `#include <...>` outside the allowlist: the C++ standard library, boost/, fmt/,
  <sys/types.h> (pid_t), <linux/ioctl.h> and <linux/android/...> (ioctl codes), <sanitizer/...>;
  `#include "..."` must stay inside core/ and uapi/ (never cused/, so never the host);
* a call of an OS function (syscall, madvise, sysconf, sched_yield, ...; the names that are also
  core's own methods, open/read/write/close/ioctl/poll/sleep/send, only in their global form
  ::open( ), an inline-asm system call, or a thread of core's own (std::thread, std::jthread,
  std::async).

Comments and string literals are ignored. Prints file:line: reason for each hit and exits 1.
What core reaches through the standard library (std::mutex, std::condition_variable,
steady_clock, std::this_thread::yield) is the standard's, not core's.

Usage: core_purity.py [SOURCE_ROOT]   (default: the directory above this script)
Registered as the meson test 'core-purity' (suite 'docs').
"""

import os
import re
import sys

from spec_citations import core_sources

CXX_HEADERS = {
    # C++20 library headers
    "algorithm", "any", "array", "atomic", "barrier", "bit", "bitset", "charconv", "chrono",
    "codecvt", "compare", "complex", "concepts", "condition_variable", "coroutine", "deque",
    "exception", "execution", "expected", "filesystem", "format", "forward_list", "fstream",
    "functional", "future", "initializer_list", "iomanip", "ios", "iosfwd", "iostream", "istream",
    "iterator", "latch", "limits", "list", "locale", "map", "memory", "memory_resource", "mutex",
    "new", "numbers", "numeric", "optional", "ostream", "queue", "random", "ranges", "ratio",
    "regex", "scoped_allocator", "semaphore", "set", "shared_mutex", "source_location", "span",
    "sstream", "stack", "stdexcept", "stop_token", "streambuf", "string", "string_view",
    "syncstream", "system_error", "thread", "tuple", "type_traits", "typeindex", "typeinfo",
    "unordered_map", "unordered_set", "utility", "valarray", "variant", "vector", "version",
    # the C library as C++ headers
    "cassert", "cctype", "cerrno", "cfenv", "cfloat", "cinttypes", "climits", "clocale", "cmath",
    "csetjmp", "csignal", "cstdarg", "cstddef", "cstdint", "cstdio", "cstdlib", "cstring",
    "ctime", "cuchar", "cwchar", "cwctype",
}
ALLOWED_PREFIXES = ("boost/", "fmt/", "linux/android/", "sanitizer/")
ALLOWED_HEADERS = {"sys/types.h", "linux/ioctl.h"}
ALLOWED_QUOTED_PREFIXES = ("core/", "uapi/")

# OS functions that core has no member of the same name for: any call is a hit (but not a member
# call obj.f( / p->f( or a qualified N::f( other than std::).
OS_CALLS = [
    "syscall", "madvise", "sysconf", "getpagesize", "sched_yield", "mmap", "munmap", "mremap",
    "mprotect", "mincore", "mlock", "munlock", "msync", "fallocate", "ftruncate", "memfd_create",
    "lseek", "pread", "pwrite", "preadv", "pwritev", "readv", "writev", "process_vm_readv",
    "process_vm_writev", "fcntl", "dup", "dup2", "dup3", "pipe", "pipe2", "eventfd", "ppoll",
    "epoll_create1", "epoll_ctl", "epoll_wait", "getpid", "gettid", "getppid",
    "getuid", "geteuid", "getgid", "getegid", "clock_gettime", "clock_nanosleep", "nanosleep",
    "usleep", "prctl", "kill", "tgkill", "sigaction", "pthread_create", "pthread_kill",
    "pthread_self", "sched_setscheduler", "sched_getscheduler", "sched_setaffinity",
    "setpriority", "getpriority", "getrusage", "sysinfo", "uname", "socket", "openat", "fstat",
    "lstat", "unlinkat", "fopen", "popen", "getenv", "secure_getenv",
]
# Names core also uses for its own methods (Proc::ioctl, UserMemory::read, Timer::sleep,
# PendingWake::send, Proc::poll, ...): only the explicitly global form is a hit.
AMBIGUOUS_CALLS = [
    "open", "close", "read", "write", "ioctl", "poll", "select", "sleep", "send", "stat", "unlink",
]

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
HAS_INCLUDE = re.compile(r"__has_include\s*\(\s*<([^>]+)>")
OS_CALL = re.compile(
    r"(?<![\w.>])((?:std\s*::\s*)?|::\s*)\b(" + "|".join(OS_CALLS) + r")\s*\(")
# ::name( where the :: is not preceded by an identifier or a template's closing >.
GLOBAL_CALL = re.compile(r"(?<![\w>:])::\s*(" + "|".join(AMBIGUOUS_CALLS) + r")\s*\(")
THREAD = re.compile(r"\bstd\s*::\s*(thread|jthread|async)\b")
ASM_SYSCALL = re.compile(r"\basm\b.*\b(syscall|sysenter|svc|int\s+\$0x80)\b")

STRING = re.compile(r'"(?:\\.|[^"\\])*"')
CHAR = re.compile(r"(?<![\w'])'(?:\\.|[^'\\])'")


def strip_code(lines):
    """Yields (line number, code) with comments and string/char literals blanked."""
    in_block = False
    for number, line in enumerate(lines, 1):
        out = []
        i = 0
        while i < len(line):
            if in_block:
                end = line.find("*/", i)
                if end < 0:
                    i = len(line)
                else:
                    in_block = False
                    i = end + 2
                continue
            rest = line[i:]
            if rest.startswith("/*"):
                in_block = True
                i += 2
            elif rest.startswith("//"):
                break
            elif rest[0] == '"':
                m = STRING.match(rest)
                out.append('""')
                i += m.end() if m else len(rest)
            elif rest[0] == "'" and CHAR.match(line, i):
                m = CHAR.match(line, i)
                out.append("' '")
                i = m.end()
            else:
                out.append(rest[0])
                i += 1
        yield number, "".join(out)


def include_allowed(kind, header):
    if kind == '"':
        return header.startswith(ALLOWED_QUOTED_PREFIXES)
    return (header in CXX_HEADERS or header in ALLOWED_HEADERS
            or header.startswith(ALLOWED_PREFIXES))


def check_file(path, shown):
    problems = []
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    for number, line in enumerate(lines, 1):
        m = INCLUDE.match(line)
        if m and not include_allowed(m.group(1), m.group(2)):
            problems.append(f"{shown}:{number}: {line.strip()}: not allowed in core")
        for header in HAS_INCLUDE.findall(line):
            if not include_allowed("<", header):
                problems.append(f"{shown}:{number}: __has_include(<{header}>): not allowed in core")
        if ASM_SYSCALL.search(line):
            problems.append(f"{shown}:{number}: a system call in inline asm")
    for number, code in strip_code(lines):
        if INCLUDE.match(code):
            continue
        for m in OS_CALL.finditer(code):
            problems.append(f"{shown}:{number}: OS call {m.group(2)}(): belongs in cused/host")
        for m in GLOBAL_CALL.finditer(code):
            problems.append(f"{shown}:{number}: OS call ::{m.group(1)}(): belongs in cused/host")
        for m in THREAD.finditer(code):
            problems.append(f"{shown}:{number}: std::{m.group(1)}: core owns no thread")
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    core = os.path.join(root, "core")
    if not os.path.isdir(core):
        print(f"core_purity: no core/ under {root}", file=sys.stderr)
        return 2
    problems = []
    for path in core_sources(root):
        problems += check_file(os.path.join(root, path), path)
    for problem in problems:
        print(problem)
    if problems:
        print(f"core_purity: {len(problems)} OS call(s) or header(s) in core/; "
              "the host layer (cused/host/) makes them (docs/design.md section 1)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
