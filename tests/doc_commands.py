#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The command blocks of README.md, docs/run.md and docs/ab.md, run as a new user would (issue 35).

Every code block in those files carries a marker, an HTML comment on the line before it (hidden
when the Markdown is rendered), that says what the block is:

    <!-- doc-test: run -->                 commands: run in order, each must exit 0
    <!-- doc-test: run env K=V ... -->     the same, with these variables set (V may use $VAR)
    <!-- doc-test: in-check -->            commands tools/check (or .ci/run) runs, verbatim (checked)
    <!-- doc-test: output -->              what a command printed
    <!-- doc-test: synopsis -->            usage with placeholders (A B, COMMAND, DIR ...)
    <!-- doc-test: skip REASON -->         not run here, and why (the reason is required)

A block without a marker is an error, so a new example cannot drift unchecked. The "run" blocks
of one file run in one bash, in order, from the source root (the files name `build/...`), inside
a private mount and PID namespace with a fresh /run and an overlay on /dev: links a command makes
in /dev and daemons it starts end with the namespace, and the host's /dev, /run and other tests'
mounts are left alone. A command ending in `&` runs in the background and is followed by a
person's pause (1 s) before the next.

Usage: doc_commands.py SOURCE_ROOT BUILD_ROOT [FILE...]   (meson test 'doc-commands', suite docs;
       'doc-commands-kernel-designs' runs docs/kernel-designs.md's when the kernel trees are fetched)
       doc_commands.py --self-test                          (meson test 'doc-commands-self-test')
Needs root (the namespaces, FUSE). Exits 77 (skipped) when BUILD_ROOT is not SOURCE_ROOT/build,
since the documents name that directory.
"""

import os
import re
import shlex
import subprocess
import sys
import tempfile

DOCUMENTS = ["README.md", "docs/run.md", "docs/ab.md"]
MARKER = re.compile(r"^<!-- doc-test: (run|in-check|output|synopsis|skip)\b(.*?)-->\s*$")
KINDS_NEEDING_TEXT = {"skip"}
TIME_LIMIT = int(os.environ.get("CUSED_DOC_TEST_TIME", "900"))  # one document, seconds


class Block:
    def __init__(self, path, line, lines, kind, argument):
        self.path, self.line, self.lines = path, line, lines
        self.kind, self.argument = kind, argument.strip()

    def commands(self):
        """(line number, command) per shell command: `\\` continuations joined, comments and
        blank lines dropped."""
        result, pending, start = [], "", 0
        for offset, text in enumerate(self.lines):
            if not pending:
                start = self.line + offset
                if not text.strip() or text.lstrip().startswith("#"):
                    continue
            if text.rstrip().endswith("\\"):
                pending += text.rstrip()[:-1] + " "
                continue
            result.append((start, pending + text))
            pending = ""
        if pending:
            result.append((start, pending))
        return result

    def environment(self):
        words = shlex.split(self.argument)
        if words[:1] != ["env"]:
            return {}
        return dict(word.split("=", 1) for word in words[1:])


def code_blocks(path, text):
    """Indented (4 spaces, after a blank line) and fenced blocks, with the marker above each;
    errors for blocks without one."""
    lines = text.split("\n")
    blocks, errors = [], []
    i = 0
    while i < len(lines):
        fenced = lines[i].startswith("```")
        indented = lines[i].startswith("    ") and lines[i].strip() and (i == 0 or not lines[i - 1].strip())
        if not fenced and not indented:
            i += 1
            continue
        start = i
        if fenced:
            i += 1
            body_start = i
            while i < len(lines) and not lines[i].startswith("```"):
                i += 1
            body = lines[body_start:i]
            i += 1
            first_line = body_start + 1
        else:
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                i += 1
            body = [line[4:] for line in lines[start:i]]
            while body and not body[-1].strip():
                body.pop()
            first_line = start + 1
        above = start - 1
        while above >= 0 and not lines[above].strip():
            above -= 1
        match = MARKER.match(lines[above]) if above >= 0 else None
        if not match:
            errors.append(f"{path}:{start + 1}: a code block without a <!-- doc-test: ... --> marker")
            continue
        kind, argument = match.group(1), match.group(2)
        if kind in KINDS_NEEDING_TEXT and not argument.strip():
            errors.append(f"{path}:{above + 1}: 'doc-test: {kind}' needs its reason")
            continue
        blocks.append(Block(path, first_line, body, kind, argument))
    return blocks, errors


def words_of(command):
    """A command line's words, whitespace collapsed and a trailing `# comment` dropped."""
    return " ".join(re.sub(r"(^|\s)#.*$", "", command).split())


def check_in_check(blocks, check_script):
    """Each command of an in-check block must be in a line of tools/check or .ci/run (its words,
    in order; `check_script` holds both)."""
    words_of_check = [words_of(line) for line in check_script.split("\n") if line.strip()]
    errors = []
    for block in blocks:
        if block.kind != "in-check":
            continue
        for line, command in block.commands():
            words = words_of(command)
            if not any(words in candidate for candidate in words_of_check):
                errors.append(f"{block.path}:{line}: '{words}' is marked in-check, but neither "
                              "tools/check nor .ci/run runs it")
    return errors


DRIVER_PROLOGUE = r"""
set -u
mount -t tmpfs tmpfs /run
mkdir -p /run/doc-test/upper /run/doc-test/work /run/doc-test/dev
# /dev as an overlay of the host's (device nodes kept), so that links made in it stay here.
mount -t overlay overlay -o lowerdir=/dev,upperdir=/run/doc-test/upper,workdir=/run/doc-test/work /run/doc-test/dev
for sub in pts shm mqueue; do [ -d /dev/$sub ] && mount --rbind /dev/$sub /run/doc-test/dev/$sub; done
mount --move /run/doc-test/dev /dev
# A fresh /tmp too (the documents' /tmp/rb), unless the source tree itself lies in /tmp.
case "$DOC_ROOT/" in /tmp/*) ;; *) mount -t tmpfs tmpfs /tmp ;; esac
doc_step() { printf '\n@@ %s: $ %s\n' "$1" "$2"; }
doc_rc() {
  if [ "$2" != 0 ]; then printf '@@ FAILED %s: exited %s\n' "$1" "$2"; exit 1; fi
}
"""


# The end of a document: what it left running is stopped as a person would (SIGTERM: daemons
# unmount and remove what they created), then the namespace's end kills whatever is left.
DRIVER_EPILOGUE = r"""
kill -TERM -1 2>/dev/null
for _ in $(seq 100); do pgrep -v -x bash >/dev/null || break; sleep 0.1; done
printf '\n@@ DONE\n'
"""


def driver_script(blocks, root):
    parts = [f"DOC_ROOT={shlex.quote(root)}\n", DRIVER_PROLOGUE, f"cd {shlex.quote(root)}\n"]
    for block in blocks:
        if block.kind != "run":
            continue
        for name, value in block.environment().items():
            parts.append(f"export {name}=\"{value}\"\n")  # "$PATH" expands
        for line, command in block.commands():
            where = f"{block.path}:{line}"
            parts.append(f"doc_step {shlex.quote(where)} {shlex.quote(command)}\n")
            if command.rstrip().endswith("&") and not command.rstrip().endswith("&&"):
                parts.append(command + "\nsleep 1\n")
            else:
                parts.append(command + f"\ndoc_rc {shlex.quote(where)} $?\n")
        for name in block.environment():
            parts.append(f"unset {name}\n")
    parts.append(DRIVER_EPILOGUE)
    return "".join(parts)


def run_document(path, blocks, root):
    script = driver_script(blocks, root)
    with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as handle:
        handle.write(script)
        name = handle.name
    try:
        process = subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "--pid", "--fork", "--mount-proc",
             "bash", name], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, errors="replace", timeout=TIME_LIMIT)
        output = process.stdout
    except subprocess.TimeoutExpired as expired:
        output = (expired.stdout or b"").decode(errors="replace") if isinstance(expired.stdout, bytes) \
            else (expired.stdout or "")
        output += f"\n@@ FAILED {path}: the document's commands took more than {TIME_LIMIT} s\n"
    finally:
        os.unlink(name)
    print(output)
    return "\n@@ DONE" in output and "@@ FAILED" not in output


def main(argv):
    if argv[1:2] == ["--self-test"]:
        return self_test()
    root, build = os.path.realpath(argv[1]), os.path.realpath(argv[2])
    files = argv[3:] or DOCUMENTS
    errors, documents = [], []
    for path in files:
        with open(os.path.join(root, path)) as handle:
            blocks, found = code_blocks(path, handle.read())
        errors += found
        documents.append((path, blocks))
    check_script = ""
    for script in ["tools/check", ".ci/run"]:
        with open(os.path.join(root, script)) as handle:
            check_script += handle.read() + "\n"
    for _, blocks in documents:
        errors += check_in_check(blocks, check_script)
    for error in errors:
        print(error)
    if errors:
        return 1
    if build != os.path.join(root, "build"):
        print(f"doc-commands: the documents name build/, and this build is {build}: skipped")
        return 77
    failed = [path for path, blocks in documents if not run_document(path, blocks, root)]
    counts = {}
    for _, blocks in documents:
        for block in blocks:
            counts[block.kind] = counts.get(block.kind, 0) + 1
    print("blocks: " + ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())))
    passed = len(documents) - len(failed)
    print(f"doc-commands: {passed} passed, {len(failed)} failed" +
          (f" ({', '.join(failed)})" if failed else ""))
    return 1 if failed else 0


def self_test():
    """The checker's own rules, on made-up documents: each must fail where it should."""
    problems = []

    def expect(condition, what):
        if not condition:
            problems.append(what)

    _, errors = code_blocks("t.md", "text\n\n    echo unmarked\n")
    expect(errors and "without" in errors[0], "an unmarked block is refused")
    _, errors = code_blocks("t.md", "<!-- doc-test: skip -->\n\n    echo x\n")
    expect(errors and "reason" in errors[0], "a skip without a reason is refused")
    blocks, errors = code_blocks("t.md", "<!-- doc-test: run env A=1 B=two -->\n\n    a \\\n"
                                 "      b   # joined\n    # a comment\n    c &\n")
    expect(not errors and [words_of(c) for _, c in blocks[0].commands()] == ["a b", "c &"],
           "continuations joined, comments dropped")
    expect(blocks[0].environment() == {"A": "1", "B": "two"}, "env of a run block")
    blocks, _ = code_blocks("t.md", "<!-- doc-test: in-check -->\n\n    tools/reproduce all\n"
                            "    tools/quickstart\n")
    errors = check_in_check(blocks, "echo hi\nCUSED_X=1 tools/reproduce all\n")
    expect(len(errors) == 1 and "tools/quickstart" in errors[0],
           "an in-check command tools/check does not run is refused")
    if os.geteuid() == 0:
        with tempfile.TemporaryDirectory() as root:
            blocks, _ = code_blocks("t.md", "<!-- doc-test: run -->\n\n    true\n    false\n")
            expect(not run_document("t.md", blocks, root), "a failing command fails the document")
            blocks, _ = code_blocks("t.md", "<!-- doc-test: run -->\n\n    ln -s /x /dev/doc-test-link\n"
                                    "    test -L /dev/doc-test-link\n")
            expect(run_document("t.md", blocks, root), "a passing document passes")
            expect(not os.path.lexists("/dev/doc-test-link"), "a link made in /dev stays inside")
    for problem in problems:
        print("self-test FAILED: " + problem)
    print(f"doc-commands self-test: {'1 failed' if problems else '1 passed'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
