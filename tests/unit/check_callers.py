# SPDX-License-Identifier: MIT
"""No function of the library that only tests or benchmarks call: every
non-global-static function the library's objects define (nm) must be called
by the library itself, from another of its objects (an undefined symbol
there) or from its own source file. What only tests need lives with the
tests (tests/channels/bichannel-test.c, tests/gpu/monitor-test.h, ...).

The library: the objects of channels/ core/ gpu/ gpu/*/ ompt/ acc/ nvtx/ kokkos/ mpi/ report/,
of libgputool.so itself, and of the gputool command (analysis/).
Usage: check_callers.py SOURCE_DIR BUILD_DIR"""
import glob
import os
import re
import subprocess
import sys

SRC, BUILD = (os.path.abspath(a) for a in sys.argv[1:3])
# Called only by tests or benchmarks, kept in the library for now, each with
# the reason. The list may only shrink: a name here that the library calls,
# or that is gone, fails the check too.
KNOWN = {
    "gt_monitor__stats": "the monitor's counters, read by its tests and benchmarks",
    "gt_blame__stats": "blame's counters, read by its tests and benchmarks",
    "gt_cupti_record__replay": "replays recorded CUPTI buffers through the backend (tests/cupti)",
    "gt_cupti_elide__build_file": "the elision ranges of a file on disk (tests/cupti)",
    "gt_cupti_pcsamp__disassembly": "a recorded disassembly put in place of nvdisasm's (tests/cupti)",
    "gt_sass__section": "one section of a disassembly (tests/unit, bench/sass)",
}
FOLDERS = ["channels", "core", "gpu", "gpu/cupti", "gpu/opencl", "gpu/sass", "ompt", "acc", "nvtx", "kokkos", "mpi",
           "report", "analysis", "."]


def objects():
    """(object, its source file) for every object of the library."""
    out = []
    for folder in FOLDERS:
        for d in glob.glob(os.path.join(BUILD, folder, "CMakeFiles", "*.dir")):
            if folder == "." and not d.endswith("gputool_lib.dir"):
                continue
            for o in glob.glob(os.path.join(d, "**", "*.o"), recursive=True):
                rel = os.path.relpath(o, d)[:-2].replace("__", "..")
                out.append((o, os.path.normpath(os.path.join(SRC, folder, rel))))
    return out


def nm(args, objs):
    """nm's lines for every object at once (-A: each line starts with the
    object's name and a colon), split into fields."""
    r = subprocess.run(["nm", "-A"] + args + objs, capture_output=True, text=True, check=True)
    out = []
    for line in r.stdout.splitlines():
        obj, _, rest = line.partition(".o:")
        out.append((obj + ".o", rest.split()))
    return out


def code_of(text):
    """The text without comments, string and character literals."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"'(\\.|[^'\\\n])*'", "''", text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def used_in_file(name, code):
    """Whether the file's code uses name beyond declaring and defining it:
    inside a body or an initializer, or as a value at file scope."""
    depth, pos = 0, 0
    for m in re.finditer(r"[{}]|\b%s\b" % re.escape(name), code):
        tok = m.group(0)
        if tok == "{":
            depth += 1
        elif tok == "}":
            depth -= 1
        elif depth > 0 or not re.match(r"\s*\(", code[m.end():]):
            return True
        pos = m.end()
    return False


def main():
    objs = objects()
    if len(objs) < 50:
        print("FAIL only %d objects of the library under %s: build it first" % (len(objs), BUILD))
        sys.exit(1)
    source = dict(objs)
    paths = [o for o, _ in objs]
    defined, undefined = {}, set()
    for o, f in nm(["--defined-only", "--extern-only"], paths):
        if len(f) == 3 and f[1] == "T" and f[2].startswith("gt_"):
            defined.setdefault(f[2], source[o])
    for o, f in nm(["--undefined-only"], paths):
        if f:
            undefined.add(f[-1])
    # The sanitizer builds leave out core/mem-wrap.c (their runtimes must
    # see every block), the only caller of most of core/mem.c.
    with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
        cache = f.read()
    if "GT_SANITIZE:BOOL=ON" in cache or "GT_TSAN:BOOL=ON" in cache:
        with open(os.path.join(SRC, "core", "mem-wrap.c")) as f:
            undefined.update(re.findall(r"\bgt_\w+", f.read()))
    codes = {}
    failures = []
    known = set()
    for name, src in sorted(defined.items()):
        if name in undefined:
            continue
        if src not in codes:
            with open(src, encoding="utf-8", errors="replace") as f:
                codes[src] = code_of(f.read())
        if used_in_file(name, codes[src]):
            continue
        if name in KNOWN:
            known.add(name)
            continue
        failures.append("%s (%s) is called by no code of the library: move it to the tests that call it"
                        % (name, os.path.relpath(src, SRC)))
    for name in sorted(set(KNOWN) - known):
        failures.append("%s is listed in KNOWN but the library calls it, or it is gone: take it off" % name)
    for f in failures:
        print("FAIL " + f)
    print("%d objects, %d functions, %d failures" % (len(objs), len(defined), len(failures)))
    sys.exit(1 if failures else 0)


main()
