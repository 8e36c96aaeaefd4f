# SPDX-License-Identifier: MIT
"""Blame shifting with OpenMP target offload (host offload), end to end:
samples/omp-target/blame runs a 0.3 s nowait target region, waits for it
with taskwait, then computes 0.4 s of CPU time with nothing offloaded. It
runs as users run it (`gputool run`), and its numbers are checked against
what the sample measured itself, so that they hold on a busy machine.
Usage: test_blame_target.py BUILD_DIR"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from gtrun import bounded, check, main, own_times, profiles, run_gputool  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
LIB = os.path.join(BUILD, "libgputool.so")
GPUTOOL = os.path.join(BUILD, "gputool")
EXE = os.path.join(BUILD, "samples", "omp-target", "blame")
ENV = {"OMP_NUM_THREADS": "1", "GPUTOOL_SAMPLE_HZ": "1000", "SAMPLE_TIMES": "1"}
if os.environ.get("GT_TARGET_PRELOAD"):
    ENV["LD_PRELOAD"] = os.environ["GT_TARGET_PRELOAD"]
BUSY, CPU = 0.3e9, 0.4e9


def total(p, metric, where):
    return sum(p.excl(n, metric) for n in p.doc["nodes"] if where(p.names(n)))


def test_blame():
    outdir, err = run_gputool(GPUTOOL, EXE, env=ENV)
    own = own_times(err, "blame times:")
    p = profiles(GPUTOOL, outdir)[0]
    idle = total(p, "CPU_IDLE", lambda n: n[-1:] == ["<omp taskwait>"] and "wait_all" in n)
    cause = total(p, "CPU_IDLE_CAUSE", lambda n: "launch" in n and "<omp kernel>" in n)
    gpu_idle = total(p, "GPU_IDLE_CAUSE", lambda n: "cpu_only" in n)
    period = 1e9 / 1000
    print("  CPU_IDLE at the taskwait      %.3f s (the kernel ran %.3f s of the wait)" %
          (idle / 1e9, own["wait"]["busy_ns"] / 1e9))
    print("  CPU_IDLE_CAUSE at the launch  %.3f s" % (cause / 1e9))
    print("  GPU_IDLE_CAUSE in cpu_only    %.3f s (%.3f s CPU time, %.3f s wall)" %
          (gpu_idle / 1e9, CPU / 1e9, own["cpu_only"]["wall_ns"] / 1e9))
    # The tool's wait lies within the program's; the kernel ran through most
    # of it (what the tool misses is the gap between the program's clock
    # reading and the taskwait's callback, and the kernel's end and its
    # callback: scheduling, on a busy machine, so half is the bound).
    check(own["wait"]["busy_ns"] > 0, "the kernel did not run during the wait")
    bounded(idle, 0.5 * own["wait"]["busy_ns"], own["wait"]["wall_ns"], "CPU_IDLE at the taskwait")
    # One kernel kept the CPU waiting: the wait it overlapped is blamed on it;
    # what came after its end (the runtime noticing, a busy machine) is not.
    bounded(cause, 0.5 * own["wait"]["busy_ns"], idle, "CPU_IDLE_CAUSE at the launch site")
    # The device was idle all through cpu_only, which the samples see for its
    # CPU time (a CPU-time timer), within a few samples.
    bounded(gpu_idle, CPU - 20 * period, own["cpu_only"]["wall_ns"] + 20 * period, "GPU_IDLE_CAUSE in cpu_only")
    # Nothing else waited: all the idle time is at the one taskwait.
    check(total(p, "CPU_IDLE", lambda n: True) == idle, "CPU_IDLE elsewhere")


main([("nowait target + taskwait: CPU_IDLE, CPU_IDLE_CAUSE, GPU_IDLE_CAUSE", test_blame)])
