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
    expect = [
        (saxpy, "ACC_COUNT", 3 * STEPS), (scale, "ACC_COUNT", STEPS),
        (saxpy, "ACC_LAUNCHES", 3 * STEPS), (scale, "ACC_LAUNCHES", STEPS),
        (saxpy, "ACC_UP_BYTES", 3 * STEPS * 2 * N), (saxpy, "ACC_DOWN_BYTES", 3 * STEPS * N),
        (scale, "ACC_UP_BYTES", STEPS * N), (scale, "ACC_DOWN_BYTES", STEPS * N),
        (node(p, "<acc enter data>", "stage"), "ACC_UP_BYTES", STEPS * N),
        (node(p, "<acc update>", "stage"), "ACC_UP_BYTES", STEPS * N),
    ]
    for n, metric, want in expect:
        got = p.incl(n, metric)
        print("  %-40s %-16s %12d (expected %d)" % (" > ".join(p.names(n)[-2:]), metric, got, want))
        check(got == want, "%s: %s = %d, expected %d" % ("/".join(p.names(n)), metric, got, want))
    launches = [k for k in p.find("<acc launch>")]
    check(all("<acc compute>" in p.names(k) for k in launches), "a launch outside its construct")


main([("OpenACC offloaded to the GPU: launches and bytes per construct", test_offloaded_sites)])
