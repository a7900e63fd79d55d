#!/usr/bin/env python3
"""aidl_cpp.py AIDL INCLUDE_DIR HEADER_DIR OUT_DIR STAMP.h INPUT.aidl...

Runs Debian's aidl (Android 10's) on an Android 14 .aidl file for the C++ backend, with the two
adaptations docs/aosp.md lists: the input's constant expressions (`1 << n`, `A | B`), which
Android 10's grammar lacks, are replaced by their values in a copy of the input; and the output's
`@nullable` values, which Android 10 generates as std::unique_ptr<T>, become std::optional<T> as
Android 14's aidl generates them and Android 14's libbinder and servicemanager expect. The sources
themselves are never touched."""
import pathlib
import re
import subprocess
import sys
import tempfile

CONSTANT = re.compile(r"(const\s+int\s+(\w+)\s*=\s*)([^;]+);", re.S)
# Android 10's output for @nullable String and parcelable values; a unique_ptr of an interface
# (getDefaultImpl) is not @nullable output and stays.
NULLABLE = re.compile(r"::std::unique_ptr<(::std::string|::android::String16|::android::os::\w+)>")


def evaluate_constants(text):
    """The file with every `const int NAME = EXPR;` whose EXPR is not a literal evaluated, in
    order, earlier constants of the file usable by name (AIDL's own rules for int constants)."""
    values = {}

    def replace(match):
        head, name, expression = match.group(1), match.group(2), match.group(3)
        cleaned = " ".join(expression.split())
        if not re.fullmatch(r"[\w\s()<>|&^~+\-*/]+", cleaned):
            return match.group(0)
        value = eval(cleaned, {"__builtins__": {}}, dict(values))  # names and integers only
        values[name] = value
        return f"{head}{value};"

    return CONSTANT.sub(replace, text)


def generate(aidl, include, headers, out_cpp, source):
    """Android 10's aidl on an adapted copy of `source`: its .cpp into out_cpp, its headers
    (I*.h, Bp*.h, Bn*.h or the parcelable's) under headers/PACKAGE/, @nullable made optional."""
    text = source.read_text()
    package = re.search(r"^\s*package\s+([\w.]+)\s*;", text, re.M).group(1).split(".")
    with tempfile.TemporaryDirectory() as staging:
        copy = pathlib.Path(staging, "in", *package, source.name)
        copy.parent.mkdir(parents=True)
        copy.write_text(evaluate_constants(text))
        out = pathlib.Path(staging, "out")
        subprocess.run([aidl, "--lang=cpp", "-I" + str(pathlib.Path(staging, "in")),
                        "-I" + include, str(copy), "--out", str(out), "-h", headers],
                       check=True)
        pathlib.Path(out_cpp).write_text(pathlib.Path(out, *package, source.stem + ".cpp").read_text())
    base = source.stem[1:] if source.stem.startswith("I") else source.stem
    for path in [pathlib.Path(out_cpp)] + list(pathlib.Path(headers, *package).glob(f"*{base}.h")):
        code = NULLABLE.sub(r"::std::optional<\1>", path.read_text())
        # Android 14 accepts IMPLEMENT_META_INTERFACE only for a list of hand-written interfaces;
        # its aidl generates this name instead (the same definition).
        code = code.replace("IMPLEMENT_META_INTERFACE(",
                            "DO_NOT_DIRECTLY_USE_ME_IMPLEMENT_META_INTERFACE(")
        if "::std::optional<" in code and "#include <optional>" not in code:
            code = "#include <optional>\n" + code
        path.write_text(code)


def main():
    """aidl_cpp.py AIDL INCLUDE_DIR HEADER_DIR OUT_DIR STAMP.h INPUT.aidl...: OUT_DIR/NAME.cpp per
    input; STAMP.h, written last, is what dependents of the headers wait for."""
    aidl, include, headers, out_dir, stamp, *sources = sys.argv[1:]
    for source in sources:
        source = pathlib.Path(source)
        generate(aidl, include, headers, pathlib.Path(out_dir, source.stem + ".cpp"), source)
    pathlib.Path(stamp).write_text("// the AIDL headers of " + " ".join(sys.argv[6:]) + " are generated\n")


if __name__ == "__main__":
    main()
