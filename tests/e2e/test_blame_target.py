# SPDX-License-Identifier: MIT
"""Blame shifting with OpenMP target offload (host offload), end to end:
samples/omp-target/blame runs a 0.3 s nowait target region, waits for it
with taskwait, then computes 0.4 s on the CPU with nothing offloaded.
Usage: test_blame_target.py BUILD_DIR"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from gtrun import check, close, main, profiles, run_under_tool  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
LIB = os.path.join(BUILD, "libgputool.so")
GPUTOOL = os.path.join(BUILD, "gputool")
EXE = os.path.join(BUILD, "samples", "omp-target", "blame")
ENV = {"OMP_NUM_THREADS": "1", "GPUTOOL_SAMPLE_HZ": "1000"}
if os.environ.get("GT_TARGET_PRELOAD"):
    ENV["LD_PRELOAD"] = os.environ["GT_TARGET_PRELOAD"]
BUSY, CPU = 0.3e9, 0.4e9


def total(p, metric, where):
    return sum(p.excl(n, metric) for n in p.doc["nodes"] if where(p.names(n)))


def test_blame():
    outdir, _ = run_under_tool(LIB, EXE, env=ENV)
    p = profiles(GPUTOOL, outdir)[0]
    idle = total(p, "CPU_IDLE", lambda n: n[-1:] == ["<omp taskwait>"] and "wait_all" in n)
    cause = total(p, "CPU_IDLE_CAUSE", lambda n: "launch" in n and "<omp kernel>" in n)
    gpu_idle = total(p, "GPU_IDLE_CAUSE", lambda n: "cpu_only" in n)
    print("  CPU_IDLE at the taskwait      %.3f s (expected %.3f)" % (idle / 1e9, BUSY / 1e9))
    print("  CPU_IDLE_CAUSE at the launch  %.3f s" % (cause / 1e9))
    print("  GPU_IDLE_CAUSE in cpu_only    %.3f s (expected %.3f)" % (gpu_idle / 1e9, CPU / 1e9))
    check(close(idle, BUSY, 0.10), "CPU_IDLE %.3f s at the taskwait" % (idle / 1e9))
    check(close(cause, idle, 0.10), "CPU_IDLE_CAUSE %.3f s at the launch site" % (cause / 1e9))
    check(close(gpu_idle, CPU, 0.10), "GPU_IDLE_CAUSE %.3f s in cpu_only" % (gpu_idle / 1e9))
    # Nothing else waited: all the idle time is at the one taskwait.
    check(total(p, "CPU_IDLE", lambda n: True) == idle, "CPU_IDLE elsewhere")


main([("nowait target + taskwait: CPU_IDLE, CPU_IDLE_CAUSE, GPU_IDLE_CAUSE", test_blame)])
