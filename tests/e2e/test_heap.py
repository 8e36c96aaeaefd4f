# SPDX-License-Identifier: MIT
"""The measured program is the real program: the tool takes nothing from the
program's malloc, so glibc's heap (its top, its trim and mmap thresholds)
evolves as without the tool. heap_pin frees 12 MiB of temporaries each
iteration and faults them in again, unless a block another library took on
top of them pins the heap; it counts its own page faults over the loop
(getrusage), which must match the bare run within 5 % when the tool is
attached through OMP_TOOL_LIBRARIES and when `gputool run` preloads it.
The library's own references to the allocator are checked too: only free()
remains, for blocks that libc allocated.

Usage: test_heap.py BUILD_DIR HEAP_PIN"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from gtrun import check, main, one_profile, run  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
PIN = os.path.abspath(sys.argv[2])
GPUTOOL = os.path.join(BUILD, "gputool")
LIB = os.path.realpath(os.path.join(BUILD, "libgputool.so"))
ITERS = "20"
REL = 0.05
ALLOCATORS = {"malloc", "calloc", "realloc", "reallocarray", "aligned_alloc", "memalign",
              "posix_memalign", "valloc", "pvalloc", "strdup", "strndup", "asprintf",
              "vasprintf", "__strdup", "__libc_malloc", "__libc_calloc"}


def sanitized():
    with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
        cache = f.read()
    return "GT_SANITIZE:BOOL=ON" in cache or "GT_TSAN:BOOL=ON" in cache


def faults(env=None, via_run=False):
    out = tempfile.mkdtemp(prefix="gt-heap-")
    cmd = [PIN, ITERS]
    e = {"OMP_NUM_THREADS": "2"}
    if via_run:
        cmd = [GPUTOOL, "run", "-o", out, "--"] + cmd
    elif env:
        e.update(env, GPUTOOL_OUTPUT=out)
    rc, so, se = run(cmd, env=e)
    check(rc == 0, "heap_pin exited %d: %s" % (rc, se))
    m = re.search(r"heap_pin: minflt (\d+) iters", se)
    check(m, "no 'heap_pin: minflt' line on stderr: %r" % se)
    if env or via_run:
        one_profile(GPUTOOL, out)
    return int(m.group(1)), so


def test_no_allocator_imports():
    """The library imports no allocator from libc but free() (for libc's
    own blocks), so no call of its code can reach the program's heap."""
    if sanitized():
        print("skipped: the sanitizer builds keep libc's allocator")
        return
    p = subprocess.run(["nm", "-D", "--undefined-only", LIB], capture_output=True, text=True)
    check(p.returncode == 0, "nm failed: %s" % p.stderr)
    names = {l.split()[-1].split("@")[0] for l in p.stdout.splitlines() if l.strip()}
    bad = sorted(names & ALLOCATORS)
    check(not bad, "libgputool.so imports %s from libc" % bad)
    check("free" in names, "libgputool.so should import free() for libc's blocks")


def test_faults_as_without_the_tool():
    if sanitized():
        print("skipped: the sanitizer runtimes replace the program's allocator")
        return
    bare, out_bare = faults()
    # The program's heap gives its temporaries back each iteration: at least
    # 12 MiB of pages each time, or this program shows nothing.
    check(bare >= int(ITERS) * 12 * 256 // 2,
          "heap_pin made only %d faults bare: it no longer shows the effect" % bare)
    for how, env, via_run in (("OMP_TOOL_LIBRARIES", {"OMP_TOOL_LIBRARIES": LIB}, False),
                              ("gputool run", None, True)):
        got, out = faults(env, via_run)
        check(out == out_bare, "%s: the program's output changed: %r vs %r" % (how, out, out_bare))
        check(abs(got - bare) <= REL * bare,
              "%s: %d page faults in the loop, %d without the tool (more than %d %% apart)"
              % (how, got, bare, REL * 100))


if __name__ == "__main__":
    main([("no allocator imported but free", test_no_allocator_imports),
          ("page faults as without the tool", test_faults_as_without_the_tool)])
