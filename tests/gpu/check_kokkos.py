# SPDX-License-Identifier: MIT
"""A real Kokkos program built with Kokkos' CUDA backend (tests/kokkos/
kokkos_axpy.cpp, built outside the repository: docs/KOKKOS.md, "CUDA") under
`gputool run`: each label hangs under main with its exact count, the CUDA
kernels Kokkos launched for it hang under the label, the deep copy's bytes
are under its label; stdout and the exit status are the program's own.

Usage: check_kokkos.py GPUTOOL AXPY"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from gtrun import check, main, one_profile, run  # noqa: E402

GPUTOOL, EXE = (os.path.abspath(a) for a in sys.argv[1:3])
N = 1 << 18  # elements of the program's views (doubles)
# path from the root -> (REGION_COUNT, CUDA kernels under the label at least)
LABELS = {
    '<kokkos parallel_for "fill">': (["main", '<kokkos parallel_for "fill">'], 1, 1),
    '<kokkos parallel_for "axpy">': (["main", '<kokkos region "solve">', '<kokkos parallel_for "axpy">'], 30, 30),
    '<kokkos parallel_reduce "dot">': (["main", '<kokkos parallel_reduce "dot">'], 10, 10),
}


def test_labels_and_kernels():
    code0, out0, _ = run([EXE])
    outdir = tempfile.mkdtemp(prefix="gputool-kokkos-cuda-")
    code1, out1, err1 = run([GPUTOOL, "run", "-o", outdir, "--", EXE])
    check(code0 == code1 == 0, "exit status %d bare, %d under the tool: %s" % (code0, code1, err1[-2000:]))
    check(out0 == out1, "stdout changed: %r vs %r" % (out0, out1))
    p = one_profile(GPUTOOL, outdir)
    for label, (path, count, kernels) in LABELS.items():
        got = [n for n in p.find(label) if p.names(n) == path]
        check(len(got) == 1, "%s: %d nodes at %s; the label's: %s" %
              (label, len(got), " > ".join(path), [" > ".join(p.names(n)) for n in p.find(label)]))
        if not got:
            continue
        n = got[0]
        k = p.incl(n, "GKER_COUNT")
        print("  %-34s REGION_COUNT %d, CUDA kernels under it %d, GKER %.3f ms" %
              (label, p.excl(n, "REGION_COUNT"), k, p.incl(n, "GKER") / 1e6))
        check(p.excl(n, "REGION_COUNT") == count, "%s: REGION_COUNT %d" % (label, p.excl(n, "REGION_COUNT")))
        check(k >= kernels and (label.find("reduce") >= 0 or k == kernels),
              "%s: %d CUDA kernels under it, expected %d" % (label, k, kernels))
    copies = [n for n in p.doc["nodes"] if (n.get("name") or "").startswith("<kokkos deep_copy")]
    d2h = sum(p.incl(n, "GXCOPY_D2H_BYTES") for n in copies)
    print("  deep copies %s: %d bytes device to host" % ([n.get("name") for n in copies], d2h))
    check(d2h == N * 8, "deep copy: %d bytes device to host, expected %d" % (d2h, N * 8))


if __name__ == "__main__":
    main([("kokkos_cuda_labels_and_kernels", test_labels_and_kernels)])
