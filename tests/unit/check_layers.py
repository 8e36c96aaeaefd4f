# SPDX-License-Identifier: MIT
"""The layers point down only (docs/ARCHITECTURE.md, "Layers"): what each
folder may include, and that no programming-model layer names a vendor
backend, no backend names a layer, and nothing links through weak symbols.

Every folder of the repository that holds C sources is read: the folders are
found, not listed, and a folder without a rule below fails the check until
one is written for it (a new gpu/<vendor>/ backend, a new samples/ program).
Usage: check_layers.py SOURCE_DIR"""
import fnmatch
import os
import re
import sys

SRC = os.path.abspath(sys.argv[1])
SOURCES = (".c", ".h", ".cpp", ".cc", ".cu")
LIBRARY = {"channels", "core", "gpu", "gpu/sass", "gpu/cupti", "gpu/opencl", "ompt", "acc", "nvtx", "kokkos", "mpi", "report",
           "report/advice", "report/advice/checks"}
# folder (or pattern of folders, one level each) -> the folders its files may
# include from. The first rule that matches a folder is its rule.
RULES = [
    ("channels", {"channels"}),
    ("core", {"core", "channels"}),
    ("gpu", {"core", "channels", "gpu"}),
    ("gpu/sass", {"core", "gpu/sass"}),
    ("gpu/cupti", {"core", "channels", "gpu", "gpu/cupti", "gpu/sass"}),
    ("gpu/opencl", {"core", "channels", "gpu", "gpu/opencl"}),
    ("ompt", {"core", "channels", "gpu", "ompt"}),
    ("acc", {"core", "channels", "gpu", "acc"}),
    ("nvtx", {"core", "nvtx"}),
    # Regions the program names: core's region stack only.
    ("kokkos", {"core", "kokkos"}),
    ("mpi", {"core", "mpi"}),
    ("report", {"core", "report", "report/advice"}),
    ("report/advice", {"core", "report", "report/advice"}),
    ("report/advice/checks", {"core", "report", "report/advice"}),
    ("analysis", {"core", "report", "analysis"}),
    # What a user compiles: nothing of the tool, only what samples share.
    ("samples", {"samples"}),
    ("samples/*", {"samples", "SELF"}),
    # Tests and benchmarks drive any module, and share their helpers (and
    # the samples' own).
    ("tests/*", LIBRARY | {"analysis", "tests/*", "samples", "samples/*"}),
    ("bench/*", LIBRARY | {"analysis", "tests/*", "bench/*"}),
]
VENDORS = ("gpu/cupti", "gpu/opencl")
# Identifiers of a vendor backend and of a programming-model layer.
VENDOR_NAMES = re.compile(r"\b(gt_cupti\w*|gt_ocl\w*|InitializeInjection)\b")
LAYER_NAMES = re.compile(r"\b(gt_ompt\w*|ompt__\w+|gt_acc__\w+|acc__\w+|gt_kokkos\w*|kokkos__\w+)\b")
failures = []


def code_of(text):
    """The text without comments and string literals."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def source_folders():
    """Every folder below SRC with a source file in it, relative to SRC.
    Hidden folders and build trees (a CMakeCache.txt) are not the repository's."""
    found = []
    for d, subdirs, names in os.walk(SRC):
        subdirs[:] = sorted(s for s in subdirs if not s.startswith(".")
                            and not os.path.exists(os.path.join(d, s, "CMakeCache.txt")))
        if any(n.endswith(SOURCES) for n in names):
            found.append(os.path.relpath(d, SRC).replace(os.sep, "/"))
    return found


def matches(folder, pattern):
    return fnmatch.fnmatchcase(folder, pattern) and folder.count("/") == pattern.count("/")


def rule_of(folder):
    for pattern, allowed in RULES:
        if matches(folder, pattern):
            return allowed
    return None


def allows(allowed, folder, target):
    return any((a == "SELF" and target == folder) or matches(target, a) for a in allowed)


def included_folder(folder, inc):
    """The repository folder an #include "..." names: relative to the file's
    folder when it is there, else to the repository root (the one include
    directory of the build)."""
    local = os.path.normpath(os.path.join(SRC, folder, inc))
    if inc.startswith(".") or os.path.exists(local):
        path = local
    else:
        path = os.path.normpath(os.path.join(SRC, inc))
    return os.path.relpath(os.path.dirname(path), SRC).replace(os.sep, "/")


def check_file(top, allowed, name):
    rel = top + "/" + name if top != "." else name
    with open(os.path.join(SRC, rel), encoding="utf-8", errors="replace") as f:
        text = f.read()
    for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
        d = included_folder(top, inc)
        if d != top and not allows(allowed, top, d):
            failures.append("%s includes %s (%s may include only %s)"
                            % (rel, inc, top, ", ".join(sorted(top if a == "SELF" else a for a in allowed))))
    code = code_of(text)
    if "__attribute__((weak))" in code or "__weak__" in code:
        failures.append("%s declares a weak symbol" % rel)
    if top in LIBRARY or top == "analysis":
        if top not in VENDORS:
            for m in sorted(set(VENDOR_NAMES.findall(code))):
                failures.append("%s names the vendor backend's %s" % (rel, m))
        if top in VENDORS or top in ("core", "channels", "gpu", "gpu/sass"):
            for m in sorted(set(LAYER_NAMES.findall(code))):
                failures.append("%s names the programming-model layer's %s" % (rel, m))


def main():
    n = 0
    folders = source_folders()
    for top in folders:
        allowed = rule_of(top)
        if allowed is None:
            failures.append("%s/ has no rule: say in tests/unit/check_layers.py what it may include" % top)
            continue
        for name in sorted(os.listdir(os.path.join(SRC, top))):
            if name.endswith(SOURCES) and os.path.isfile(os.path.join(SRC, top, name)):
                n += 1
                check_file(top, allowed, name)
    missing = sorted(LIBRARY - set(folders))
    for f in failures:
        print("FAIL " + f)
    for m in missing:
        print("FAIL no sources found in %s/" % m)
    print("%d files in %d folders, %d failures" % (n, len(folders), len(failures) + len(missing)))
    sys.exit(1 if failures or missing else 0)


main()
