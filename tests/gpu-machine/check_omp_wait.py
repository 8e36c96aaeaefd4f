# SPDX-License-Identifier: MIT
"""On a machine with an NVIDIA GPU: samples/omp-target/wait (built with
clang-19 -fopenmp --offload-arch=sm_90 -fopenmp-target-jit) under
`gputool run` (OMPT and CUDA at once). The host blocks in the OpenMP runtime
while each kernel runs: CPU_IDLE must equal the kernels' time the program
measured itself (5 %), never exceed the constructs' wall time, and be
charged on to the kernels' launch (CPU_IDLE_CAUSE).
Usage: check_omp_wait.py GPUTOOL WAIT_EXE [SAVE_DIR]
LD_LIBRARY_PATH and LD_PRELOAD come from GT_RUN_LD_LIBRARY_PATH and
GT_RUN_LD_PRELOAD (the LLVM runtime and its JIT shim, docs/GPU-VALIDATION.md).
GT_CHECK_HOST_OFFLOAD=1: a host-offload build, where the kernel runs on the
host thread and nothing may be called idle."""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from gtrun import check, close, main, own_times, run  # noqa: E402

GPUTOOL, EXE = (os.path.abspath(a) for a in sys.argv[1:3])
SAVE = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else None
ENV = {"SAMPLE_TIMES": "1"}
for k in ("LD_LIBRARY_PATH", "LD_PRELOAD"):
    if os.environ.get("GT_RUN_" + k):
        ENV[k] = os.environ["GT_RUN_" + k]
HOST_OFFLOAD = os.environ.get("GT_CHECK_HOST_OFFLOAD") == "1"


def test_wait():
    outdir = tempfile.mkdtemp(prefix="gputool-omp-wait-")
    code, out, err = run([GPUTOOL, "run", "-o", outdir, "--", EXE], env=ENV)
    check(code == 0 and out.strip() == "wait: done", "wait: exit %d, %r\n%s" % (code, out, err))
    own = own_times(err, "wait times:")["target"]
    code, js, err = run([GPUTOOL, "report", outdir, "--format", "json"],
                        env={"LD_LIBRARY_PATH": ENV.get("LD_LIBRARY_PATH", "")})
    check(code == 0, "gputool report: %s" % err)
    if SAVE:
        with open(os.path.join(SAVE, "omp-wait.json"), "w") as f:
            f.write(js)
    total = {m["name"]: m.get("total", 0) for m in json.loads(js)["metrics"]}
    idle, cause = total.get("CPU_IDLE", 0), total.get("CPU_IDLE_CAUSE", 0)
    print("  constructs' wall %.3f s, kernels %.3f s (the program's own clocks)"
          % (own["wall_ns"] / 1e9, own["busy_ns"] / 1e9))
    print("  CPU_IDLE %.3f s, CPU_IDLE_CAUSE %.3f s, GKER %.3f s"
          % (idle / 1e9, cause / 1e9, total.get("GKER", 0) / 1e9))
    if HOST_OFFLOAD:
        check(idle <= 0.05 * own["busy_ns"], "CPU_IDLE %.3f s on the host device" % (idle / 1e9))
        return
    check(close(idle, own["busy_ns"], 0.05), "CPU_IDLE %.3f s, kernels %.3f s" % (idle / 1e9, own["busy_ns"] / 1e9))
    check(idle <= own["wall_ns"] * 1.01, "CPU_IDLE above the constructs' wall time")
    check(close(cause, idle, 0.10), "CPU_IDLE_CAUSE %.3f s" % (cause / 1e9))


main([("OpenMP target: the host's wait in the runtime is CPU_IDLE", test_wait)])
