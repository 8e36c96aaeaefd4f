# SPDX-License-Identifier: MIT
"""On a machine with an NVIDIA GPU: the OpenACC sample offloaded by GCC
(nvptx) runs under libgputool.so; launches and bytes up/down are exact per
construct. Usage: check_acc.py LIBGPUTOOL GPUTOOL SITES_EXE"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from gtrun import check, main, profiles, run  # noqa: E402

LIB, GPUTOOL, EXE = (os.path.abspath(a) for a in sys.argv[1:4])
N = 100000 * 4  # bytes of one array
STEPS = 10


def node(p, name, caller):
    ns = [n for n in p.find(name) if caller in " ".join(p.names(n))]
    check(len(ns) == 1, "%s under %s: %d nodes" % (name, caller, len(ns)))
    return ns[0]


def test_offloaded_sites():
    outdir = tempfile.mkdtemp(prefix="gputool-acc-gpu-")
    code0, out0, _ = run([EXE])
    code1, out1, err1 = run([EXE], env={"ACC_PROFLIB": LIB, "GPUTOOL_OUTPUT": outdir})
    check(code0 == code1 == 0 and out0 == out1, "output or exit code changed: %r %r" % (out0, out1))
    p = profiles(GPUTOOL, outdir)[0]
    print("  device:", p.meta("acc_device"))
    check("nvidia" in (p.meta("acc_device") or ""), "not on an NVIDIA device")
    saxpy, scale = node(p, "<acc compute>", "saxpy"), node(p, "<acc compute>", "scale")
    # Constructs and launches are exact. The data a compute construct maps
    # is allocated as one block per construct (the arrays, plus alignment).
    expect = [
        (saxpy, "ACC_COUNT", 3 * STEPS, p.excl), (scale, "ACC_COUNT", STEPS, p.excl),
        (saxpy, "ACC_LAUNCHES", 3 * STEPS, p.incl), (scale, "ACC_LAUNCHES", STEPS, p.incl),
        (node(p, "<acc enter data>", "stage"), "ACC_COUNT", STEPS, p.excl),
        (node(p, "<acc update>", "stage"), "ACC_COUNT", STEPS, p.excl),
        (node(p, "<acc exit data>", "stage"), "ACC_COUNT", STEPS, p.excl),
    ]
    for n, metric, want, get in expect:
        got = get(n, metric)
        print("  %-48s %-14s %10d (expected %d)" % (" > ".join(p.names(n)[-2:]), metric, got, want))
        check(got == want, "%s: %s = %d, expected %d" % ("/".join(p.names(n)), metric, got, want))
    for n, arrays, calls in ((saxpy, 2, 3 * STEPS), (scale, 1, STEPS)):
        got = p.incl(n, "ACC_ALLOC_BYTES")
        print("  %-48s %-14s %10d (at least %d)" % (" > ".join(p.names(n)[-2:]), "ACC_ALLOC_BYTES", got, arrays * N * calls))
        check(got >= arrays * N * calls, "allocated %d bytes, less than the mapped arrays" % got)
    for n in (saxpy, scale):
        print("  %-48s %-14s %10d, downloads %d" % (" > ".join(p.names(n)[-2:]), "ACC_UP_BYTES",
                                                   p.incl(n, "ACC_UP_BYTES"), p.incl(n, "ACC_DOWN_BYTES")))
    launches = [k for k in p.find("<acc launch>")]
    check(launches and all("<acc compute>" in p.names(k) for k in launches), "a launch outside its construct")
    check(all(p.incl(n, "ACC_FREE_BYTES") < 1 << 40 for n in p.find("<acc free>")), "unknown sizes summed")


main([("OpenACC offloaded to the GPU: constructs, launches, allocations per construct", test_offloaded_sites)])
