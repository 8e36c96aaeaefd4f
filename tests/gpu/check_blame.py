# SPDX-License-Identifier: MIT
"""On a machine with an NVIDIA GPU: blame shifting with CUDA. samples/cuda/blame
runs a 0.3 s kernel waited for with cudaDeviceSynchronize at another call
site, then 0.4 s of CPU time with nothing on the GPU, then a 0.2 s kernel
waited for by a blocking cudaMemcpy (copy_back).
Usage: check_blame.py LIBGPUTOOL GPUTOOL BLAME_EXE"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from gtrun import check, close, main, profiles, run  # noqa: E402

LIB, GPUTOOL, EXE = (os.path.abspath(a) for a in sys.argv[1:4])
BUSY, CPU, COPY = 0.3e9, 0.4e9, 0.2e9


def total(p, metric, where):
    return sum(p.excl(n, metric) for n in p.doc["nodes"] if where(p.names(n)))


def test_blame_cuda():
    outdir = tempfile.mkdtemp(prefix="gputool-blame-")
    code0, out0, _ = run([EXE])
    code1, out1, err = run([EXE], env={"CUDA_INJECTION64_PATH": LIB, "GPUTOOL_OUTPUT": outdir,
                                       "GPUTOOL_SAMPLE_HZ": "1000"})
    check(code0 == code1 == 0 and out0 == out1, "output or exit code changed: %r" % err)
    p = profiles(GPUTOOL, outdir)[0]
    idle = total(p, "CPU_IDLE", lambda n: "wait_all" in " ".join(n))
    copy_idle = total(p, "CPU_IDLE", lambda n: "copy_back" in " ".join(n))
    cause = total(p, "CPU_IDLE_CAUSE", lambda n: "launch" in " ".join(n))
    gpu_idle = total(p, "GPU_IDLE_CAUSE", lambda n: "cpu_only" in " ".join(n))
    elsewhere = total(p, "CPU_IDLE", lambda n: True) - idle - copy_idle
    print("  CPU_IDLE at cudaDeviceSynchronize (wait_all)  %.3f s (expected %.3f)" % (idle / 1e9, BUSY / 1e9))
    print("  CPU_IDLE at the blocking cudaMemcpy (copy_back) %.3f s (expected %.3f)"
          % (copy_idle / 1e9, COPY / 1e9))
    print("  CPU_IDLE_CAUSE at the launch site (launch)    %.3f s" % (cause / 1e9))
    print("  GPU_IDLE_CAUSE in cpu_only                    %.3f s (expected %.3f)" % (gpu_idle / 1e9, CPU / 1e9))
    print("  CPU_IDLE elsewhere (the warm-up sync)         %.3f s" % (elsewhere / 1e9))
    check(close(idle, BUSY, 0.10), "CPU_IDLE %.3f s" % (idle / 1e9))
    check(close(copy_idle, COPY, 0.05), "CPU_IDLE at the copy %.3f s" % (copy_idle / 1e9))
    check(close(cause, idle + copy_idle, 0.10), "CPU_IDLE_CAUSE %.3f s" % (cause / 1e9))
    check(close(gpu_idle, CPU, 0.10), "GPU_IDLE_CAUSE %.3f s" % (gpu_idle / 1e9))


main([("CUDA: CPU_IDLE (sync and blocking copy), CPU_IDLE_CAUSE, GPU_IDLE_CAUSE", test_blame_cuda)])
