#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""aidl_gen.py [--lang=ndk] AIDL INCLUDE_DIRS HEADER_DIR OUT_DIR STAMP.h INPUT.aidl...

Runs Debian's aidl (Android 10's) on Android 14 .aidl files for the C++ backend (or, with
--lang=ndk, the NDK backend), with the adaptations docs/aosp.md lists: the input's constant
expressions (`1 << n`, `A | B`), which Android 10's grammar lacks, are replaced by their values in
a copy of the input; in the NDK backend's output the proxy is made by SharedRefBase::make; and in
the C++ backend's output the `@nullable` values, which Android 10
generates as std::unique_ptr<T>, become std::optional<T> as Android 14's aidl generates them and
Android 14's libbinder and servicemanager expect. INCLUDE_DIRS is a ':'-separated list of import
roots. The sources themselves are never touched."""
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


def package_of(text):
    """The file's package as path components; none for a file without a package statement (the
    test interfaces of libs/binder/tests)."""
    match = re.search(r"^\s*package\s+([\w.]+)\s*;", text, re.M)
    return match.group(1).split(".") if match else []


# A structured parcelable's class in Android 10's C++ header: its fields are the declarations
# before the first method.
PARCELABLE_FIELDS = re.compile(r"(class (\w+) : public ::android::Parcelable \{\npublic:\n)((?:  [^\n(]+;\n)*)")
COMPARISONS = ["!=", "<", "<=", "==", ">", ">="]


def add_comparisons(match):
    """Android 14's aidl gives every structured parcelable the six comparisons of its fields in
    order (std::tie); Android 14's tests compare parcelables (EXPECT_EQ) and Android 10's aidl
    generates none."""
    head, name, fields = match.group(1), match.group(2), match.group(3)
    names = [re.fullmatch(r".*?(\w+)\s*(?:=.*)?;", line.strip()).group(1)
             for line in fields.splitlines()]
    mine = ", ".join(names)
    theirs = ", ".join("_rhs." + field for field in names)
    operators = "".join(f"  inline bool operator{op}(const {name}& _rhs) const {{\n"
                        f"    return std::tie({mine}) {op} std::tie({theirs});\n  }}\n"
                        for op in COMPARISONS)
    return head + fields + operators


def adapt_cpp_output(path):
    """Android 14's form of Android 10's C++ backend output, in place."""
    code = NULLABLE.sub(r"::std::optional<\1>", path.read_text())
    code, parcelables = PARCELABLE_FIELDS.subn(add_comparisons, code)
    if parcelables:
        code = "#include <tuple>\n" + code
    # Android 14 accepts IMPLEMENT_META_INTERFACE only for a list of hand-written interfaces;
    # its aidl generates this name instead (the same definition).
    code = code.replace("IMPLEMENT_META_INTERFACE(",
                        "DO_NOT_DIRECTLY_USE_ME_IMPLEMENT_META_INTERFACE(")
    if "::std::optional<" in code and "#include <optional>" not in code:
        code = "#include <optional>\n" + code
    path.write_text(code)


# Android 10's NDK backend makes the proxy with `new`, which Android 14's SharedRefBase makes private
# (objects must start owned by a shared_ptr); Android 14's aidl calls SharedRefBase::make instead.
NDK_PROXY_NEW = re.compile(r"\(new (\w+)\(binder\)\)->ref<\w+>\(\)")


def adapt_ndk_output(path):
    """Android 14's form of Android 10's NDK backend output, in place."""
    path.write_text(NDK_PROXY_NEW.sub(r"::ndk::SharedRefBase::make<\1>(binder)", path.read_text()))


def generate(aidl, lang, includes, headers, out_cpp, source):
    """Android 10's aidl on an adapted copy of `source`: its .cpp into out_cpp, its headers
    (I*.h, Bp*.h, Bn*.h or the parcelable's) under headers/PACKAGE/ (headers/aidl/PACKAGE/ for
    the NDK backend)."""
    text = source.read_text()
    package = package_of(text)
    with tempfile.TemporaryDirectory() as staging:
        copy = pathlib.Path(staging, "in", *package, source.name)
        copy.parent.mkdir(parents=True)
        copy.write_text(evaluate_constants(text))
        out = pathlib.Path(staging, "out")
        subprocess.run([aidl, "--lang=" + lang, "-I" + str(pathlib.Path(staging, "in"))] +
                       ["-I" + include for include in includes] +
                       [str(copy), "--out", str(out), "-h", headers], check=True)
        pathlib.Path(out_cpp).write_text(pathlib.Path(out, *package, source.stem + ".cpp").read_text())
    if lang == "ndk":
        adapt_ndk_output(pathlib.Path(out_cpp))
        return
    base = source.stem[1:] if source.stem.startswith("I") else source.stem
    for path in [pathlib.Path(out_cpp)] + list(pathlib.Path(headers, *package).glob(f"*{base}.h")):
        adapt_cpp_output(path)


def main():
    """OUT_DIR/NAME.cpp (NAME-ndk.cpp) per input; STAMP.h, written last, is what dependents of the headers wait
    for."""
    args = sys.argv[1:]
    lang = "cpp"
    if args and args[0].startswith("--lang="):
        lang = args.pop(0)[len("--lang="):]
    aidl, includes, headers, out_dir, stamp, *sources = args
    for source in sources:
        source = pathlib.Path(source)
        name = source.stem + ("" if lang == "cpp" else "-" + lang) + ".cpp"
        generate(aidl, lang, includes.split(":"), headers, pathlib.Path(out_dir, name), source)
    pathlib.Path(stamp).write_text(f"// the {lang} AIDL headers of " + " ".join(sources) +
                                   " are generated\n")


if __name__ == "__main__":
    main()
