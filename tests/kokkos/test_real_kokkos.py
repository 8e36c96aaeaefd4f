# SPDX-License-Identifier: MIT
"""A real Kokkos program (kokkos_axpy.cpp, built here against the Kokkos
installation KOKKOS_ROOT, OpenMP backend) under `gputool run`: its labels
hang under main, the user's call of parallel_for, with no frame of Kokkos'
templates between; the OpenMP region of each kernel hangs under its label;
exact counts; output and exit code unchanged.
Usage: test_real_kokkos.py BUILD_DIR KOKKOS_ROOT SOURCE"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from gtrun import check, main, one_profile, run_gputool, run_under_tool  # noqa: E402

BUILD, ROOT, SRC = (os.path.abspath(a) for a in sys.argv[1:4])
GPUTOOL = os.path.join(BUILD, "gputool")
CXX = os.environ.get("GT_KOKKOS_CXX", "clang++-19")


def build():
    exe = os.path.join(tempfile.mkdtemp(prefix="gputool-kokkos-"), "kokkos_axpy")
    lib = next(d for d in (os.path.join(ROOT, "lib"), os.path.join(ROOT, "lib64")) if os.path.isdir(d))
    cmd = [CXX, "-O2", "-g", "-std=c++20", "-fopenmp=libomp" if "clang" in CXX else "-fopenmp",
           "-I" + os.path.join(ROOT, "include"), SRC, "-o", exe, "-L" + lib, "-lkokkoscore", "-ldl",
           "-Wl,-rpath," + lib, "-L/usr/lib/llvm-19/lib", "-Wl,-rpath,/usr/lib/llvm-19/lib"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    check(p.returncode == 0, "build failed: %s\n%s" % (" ".join(cmd), p.stderr[-2000:]))
    return exe


def test_labels():
    exe = build()
    env = {"OMP_NUM_THREADS": "2", "OMP_PROC_BIND": "false"}
    if os.environ.get("GT_TARGET_PRELOAD"):
        # A sanitizer build of the tool, which gputool run does not preload
        # into a program built without the sanitizer: the runtime comes
        # preloaded, and the variables gputool run would set are set here.
        env.update(LD_PRELOAD=os.environ["GT_TARGET_PRELOAD"],
                   KOKKOS_TOOLS_LIBS=os.path.join(BUILD, "libgputool.so"))
        outdir, _ = run_under_tool(os.path.join(BUILD, "libgputool.so"), exe, env=env)
    else:
        outdir, _ = run_gputool(GPUTOOL, exe, env=env)
    p = one_profile(GPUTOOL, outdir)
    for path, count in ((["main", '<kokkos region "solve">'], 1),
                        (["main", '<kokkos region "solve">', '<kokkos parallel_for "axpy">'], 30),
                        (["main", '<kokkos parallel_reduce "dot">'], 10),
                        (["main", '<kokkos parallel_for "fill">'], 1),
                        (["main", '<kokkos deep_copy "y_mirror <- y">'], 1)):
        got = [n for n in p.find(path[-1]) if p.names(n) == path]
        check(len(got) == 1, "%s: %d nodes; the label's: %s" %
              (" > ".join(path), len(got), [" > ".join(p.names(n)) for n in p.find(path[-1])]))
        check(p.excl(got[0], "REGION_COUNT") == count, "%s: REGION_COUNT %s" % (path[-1], p.excl(got[0], "REGION_COUNT")))
        if "fill" in path[-1] or "axpy" in path[-1] or "dot" in path[-1]:
            check(any(c.get("name") == "<omp parallel>" for c in p.children.get(got[0]["id"], [])),
                  "no <omp parallel> under %s" % path[-1])


main([("a Kokkos program's labels under main", test_labels)])
