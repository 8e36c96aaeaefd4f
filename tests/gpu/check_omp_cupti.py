# SPDX-License-Identifier: MIT
"""On a machine with an NVIDIA GPU: OpenMP target offload measured by OMPT
and CUDA (CUPTI) at once. The CUDA work libomptarget issues must land under
the OMPT operation that issued it: kernels (GKER) under <omp kernel>, copies
(GXCOPY) under <omp copy h2d>/<omp copy d2h>, with the bytes OMPT counted.
Usage: check_omp_cupti.py LIBGPUTOOL GPUTOOL SAMPLE_EXE (env: the LLVM
runtime set up as docs/GPU-VALIDATION.md says)"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from gtrun import check, main, profiles, run  # noqa: E402

LIB, GPUTOOL, EXE = (os.path.abspath(a) for a in sys.argv[1:4])
# The LLVM runtime for the sample, as tests/gpu-machine/check_omp_target.py
# takes it: GT_RUN_LD_LIBRARY_PATH, GT_RUN_LD_PRELOAD.
BASE = {k: os.environ["GT_RUN_" + k] for k in ("LD_LIBRARY_PATH", "LD_PRELOAD")
        if os.environ.get("GT_RUN_" + k)}


def under(p, metric, placeholder):
    return sum(p.incl(n, metric) for n in p.find(placeholder))


def test_nesting():
    outdir = tempfile.mkdtemp(prefix="gputool-omp-cupti-")
    env = dict(BASE, OMP_TOOL_LIBRARIES=LIB, CUDA_INJECTION64_PATH=LIB, GPUTOOL_OUTPUT=outdir)
    code0, out0, _ = run([EXE], env=BASE)
    code1, out1, err = run([EXE], env=env)
    check(code0 == code1 == 0 and out0 == out1, "output or exit code changed: %r" % err)
    p = profiles(GPUTOOL, outdir)[0]
    kernels = under(p, "OMP_TGT_KERNEL_COUNT", "<omp kernel>")
    gker_count = under(p, "GKER_COUNT", "<omp kernel>")
    gker = under(p, "GKER", "<omp kernel>")
    h2d, h2d_cupti = under(p, "OMP_TGT_H2D_BYTES", "<omp copy h2d>"), under(p, "GXCOPY_H2D_BYTES", "<omp copy h2d>")
    d2h, d2h_cupti = under(p, "OMP_TGT_D2H_BYTES", "<omp copy d2h>"), under(p, "GXCOPY_D2H_BYTES", "<omp copy d2h>")
    outside = sum(p.incl(n, "GKER_COUNT") for n in p.find("<gpu kernel>")
                  if "<omp kernel>" not in p.names(n))
    print("  <omp kernel>: %d OMPT submits, %d CUDA kernels, %.6f s of GPU time" % (kernels, gker_count, gker / 1e9))
    print("  <omp copy h2d>: OMPT %d bytes, CUDA %d bytes" % (h2d, h2d_cupti))
    print("  <omp copy d2h>: OMPT %d bytes, CUDA %d bytes" % (d2h, d2h_cupti))
    print("  CUDA kernels outside an <omp kernel>: %d" % outside)
    check(kernels > 0 and gker_count == kernels, "CUDA kernels under <omp kernel> %d != %d" % (gker_count, kernels))
    check(gker > 0, "no GPU time under <omp kernel>")
    check(h2d_cupti == h2d and d2h_cupti == d2h, "CUDA copy bytes differ from OMPT's")
    check(outside == 0, "%d kernels outside their OMPT operation" % outside)


main([("OpenMP target + CUDA: device work under its OMPT operation", test_nesting)])
