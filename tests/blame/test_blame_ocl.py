# SPDX-License-Identifier: MIT
"""Blame shifting through the OpenCL layer on the machine's OpenCL platform
(PoCL in CI), with blame_ocl.c: a kernel of about 0.3 s launched in
launch_site() and waited for with clFinish in wait_site(), then about 0.4 s
of CPU time in cpu_work() with nothing queued. Within 10 % of what the
program measured itself: CPU_IDLE at wait_site = its wait, CPU_IDLE_CAUSE
at launch_site = the same wait, GPU_IDLE_CAUSE at cpu_work = its CPU time;
and no blame at one site lands at the other.
Usage: test_blame_ocl.py BUILD_DIR BLAME_OCL  (exit 77: no OpenCL platform)"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from gtrun import Fail, check, close, main, profiles, run  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
EXE = os.path.abspath(sys.argv[2])
LIB = os.path.join(BUILD, "libgputool.so")
GPUTOOL = os.path.join(BUILD, "gputool")


def at(prof, fn, metric):
    """metric inclusive at the function fn, over its outermost frames."""
    total = 0
    for n in prof.find(fn):
        if n["kind"] == "frame" and fn not in prof.names(n)[:-1]:
            total += prof.incl(n, metric)
    return total / 1e9


def scenario():
    outdir = tempfile.mkdtemp(prefix="gputool-blame-")
    code, out, err = run([EXE], {"OPENCL_LAYERS": LIB, "GPUTOOL_OUTPUT": outdir,
                                 "GPUTOOL_SAMPLE_HZ": "1000"})
    if code == 77:
        print("no OpenCL platform: skipped")
        sys.exit(77)
    check(code == 0, "blame_ocl failed (%d): %s" % (code, err))
    own = {k: float(v) for k, v in (line.split() for line in out.splitlines())}
    prof = profiles(GPUTOOL, outdir)[0]
    got = {
        "CPU_IDLE at wait_site": (at(prof, "wait_site", "CPU_IDLE"), own["wait_s"]),
        "CPU_IDLE_CAUSE at launch_site": (at(prof, "launch_site", "CPU_IDLE_CAUSE"), own["wait_s"]),
        "GPU_IDLE_CAUSE at cpu_work": (at(prof, "cpu_work", "GPU_IDLE_CAUSE"), own["cpu_s"]),
    }
    for what, (value, want) in got.items():
        print("  %-32s %.3f s, measured by the program %.3f s" % (what, value, want))
        check(close(value, want, 0.10), "%s: %.3f s, expected %.3f s" % (what, value, want))
    check(own["kernel_s"] > 0.1, "the kernel ran %.3f s, too short to tell" % own["kernel_s"])
    check(at(prof, "wait_site", "CPU_IDLE_CAUSE") == 0, "CPU_IDLE_CAUSE at the wait site")
    check(at(prof, "launch_site", "CPU_IDLE") == 0, "CPU_IDLE at the launch site")
    check(at(prof, "cpu_work", "CPU_IDLE") == 0, "CPU_IDLE in cpu_work")
    busy = prof.meta("gpu_busy_ns")
    check(busy and busy.startswith("0:"), "no busy time for device 0: %r" % busy)
    print("  device 0 busy %.3f s (gpu_busy_ns)" % (int(busy.split()[0][2:]) / 1e9))


if __name__ == "__main__":
    main([("scenario", scenario)])
