# SPDX-License-Identifier: MIT
"""Kokkos Tools, end to end: driver.c calls the kokkosp_* entry points as
Kokkos does. Under `gputool run` every label is a node under the user's
call in main with its exact REGION_COUNT, regions nest, the OpenMP region a
kernel starts hangs under its label, the kernels' CPU split is the one the
program measured itself, the labels read in the text report, JSON and
folded stacks, and the program's output and exit code are unchanged.
Usage: test_kokkos.py BUILD_DIR DRIVER DRIVER_SOURCE"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from gtrun import check, main, one_profile, own_times, run, run_gputool  # noqa: E402

BUILD, EXE, SRC = (os.path.abspath(a) for a in sys.argv[1:4])
GPUTOOL = os.path.join(BUILD, "gputool")
LIB = os.path.realpath(os.path.join(BUILD, "libgputool.so"))
MIB = 1 << 20
# The split is sampled (1000 Hz, about 1.6 s of CPU): within this of what
# the program measured, on a loaded machine too.
REL = 0.25

# (path below the root, REGION_COUNT, {metric: exact value})
EXPECT = [
    (["main", '<kokkos region "solve">'], 1, {}),
    (["main", '<kokkos region "solve">', '<kokkos parallel_for "axpy">'], 30, {}),
    (["main", '<kokkos parallel_reduce "dot">'], 10, {}),
    (["main", '<kokkos parallel_scan "prefix">'], 2, {}),
    (["main", '<kokkos parallel_for "team">'], 40, {}),
    (["main", '<kokkos fence "sync">'], 5, {}),
    (["main", '<kokkos deep_copy "y <- x">'], 4, {"KOKKOS_COPY_BYTES": 4 * MIB}),
    (["main", '<kokkos alloc HostSpace "x">'], 1, {"KOKKOS_ALLOC_BYTES": MIB}),
    (["main", '<kokkos alloc HostSpace "y">'], 1, {"KOKKOS_ALLOC_BYTES": MIB}),
    (["main", '<kokkos free HostSpace "x">'], 1, {"KOKKOS_FREE_BYTES": MIB}),
    (["main", '<kokkos section "phase">'], 2, {}),
    (["main", '<kokkos section "phase">', '<kokkos parallel_for "in_phase">'], 2, {}),
    # Started inside "outer", stopped after its pop: the pop closes
    # "outer", not the section, and "after" runs in the section.
    (["main", '<kokkos region "outer">'], 1, {}),
    (["main", '<kokkos region "outer">', '<kokkos section "phase">'], 1, {}),
    (["main", '<kokkos region "outer">', '<kokkos section "phase">', '<kokkos parallel_for "after">'], 1, {}),
]


def node_at(p, path):
    got = [n for n in p.find(path[-1]) if p.names(n) == path]
    check(len(got) == 1, "%s: %d nodes (the label's nodes: %s)" %
          (" > ".join(path), len(got), [" > ".join(p.names(n)) for n in p.find(path[-1])]))
    return got[0]


def test_labels():
    # Passive waits: a worker that spins at the region's end (libomp's
    # default, longer on a loaded machine) adds CPU time to the label that
    # the program's own measure, the body's, leaves out.
    outdir, err = run_gputool(GPUTOOL, EXE, env={"SAMPLE_TIMES": "1", "GPUTOOL_SAMPLE_HZ": "1000",
                                                 "OMP_WAIT_POLICY": "passive"})
    own = own_times(err, "kokkos-driver:")[None]
    p = one_profile(GPUTOOL, outdir)
    check(p.meta("kokkos_interface") == "20240906", "kokkos_interface %r" % p.meta("kokkos_interface"))
    for path, count, metrics in EXPECT:
        n = node_at(p, path)
        check(p.excl(n, "REGION_COUNT") == count,
              "%s: REGION_COUNT %s, expected %d" % (" > ".join(path), p.excl(n, "REGION_COUNT"), count))
        for m, v in metrics.items():
            check(p.excl(n, m) == v, "%s: %s %s, expected %d" % (" > ".join(path), m, p.excl(n, m), v))
    # Nothing of Kokkos' side (the _ZN6Kokkos helpers) or of the tool in any context.
    for n in p.doc["nodes"]:
        check(not (n.get("name") or "").startswith("Kokkos::"), "Kokkos frame %s" % "/".join(p.names(n)))
    axpy = node_at(p, EXPECT[1][0])
    dot = node_at(p, EXPECT[2][0])
    omp = [c for c in p.children.get(axpy["id"], []) if c.get("name") == "<omp parallel>"]
    check(len(omp) == 1, "no <omp parallel> under the axpy label")
    # The 40 "team" kernels' OpenMP regions, which Kokkos' side starts with
    # no frame of the program below the label's opener: right under the
    # label, their contexts found again without an unwind each.
    team = node_at(p, ["main", '<kokkos parallel_for "team">'])
    check([c.get("name") for c in p.children.get(team["id"], [])].count("<omp parallel>") == 1,
          "no <omp parallel> right under the team label")
    unwinds = int((p.meta("context_memo") or "0 full unwinds").split(",")[-1].split()[0])
    check(unwinds < 40, "%d full unwinds for the OpenMP constructs (context_memo %r): one a team kernel?" %
          (unwinds, p.meta("context_memo")))
    return p, outdir, own, axpy, dot, omp[0]


def test_all():
    p, outdir, own, axpy, dot, omp = test_labels()
    # The CPU split, against the program's own measurement.
    a, d = p.incl(axpy, "CPUTIME"), p.incl(dot, "CPUTIME")
    oa, od = own["axpy"], own["dot"]
    check(a > 0 and d > 0, "CPUTIME axpy %d dot %d" % (a, d))
    for what, got, want in (("axpy", a, oa), ("dot", d, od)):
        check(abs(got - want) <= REL * want, "%s: CPUTIME %.3f s, the program measured %.3f s" % (what, got / 1e9, want / 1e9))
    check(abs(a / d - oa / od) <= REL * oa / od,
          "split axpy:dot %.2f, the program measured %.2f" % (a / d, oa / od))
    check(p.incl(omp, "CPUTIME") >= 0.9 * a, "the OpenMP region holds %d of axpy's %d" % (p.incl(omp, "CPUTIME"), a))
    # The labels read in every output.
    txt = [f for f in os.listdir(outdir) if f.endswith(".txt")]
    check(len(txt) == 1, "report files %s" % txt)
    report = open(os.path.join(outdir, txt[0])).read()
    check('<kokkos parallel_for "axpy">' in report and '<kokkos region "solve">' in report,
          "labels missing from the text report")
    code, folded, err = run([GPUTOOL, "report", outdir, "--format", "folded"])
    check(code == 0, "folded: %s" % err)
    check(any(';<kokkos region "solve">;<kokkos parallel_for "axpy">;<omp parallel>;' in l for l in folded.splitlines()),
          "folded stacks without main;solve;axpy;<omp parallel>")
    check(any(l.startswith("main (driver.c:") and ';<kokkos parallel_reduce "dot">' in l for l in folded.splitlines()),
          "folded stacks without main;dot")


def test_dlopen_only():
    """KOKKOS_TOOLS_LIBS alone, the library not preloaded: Kokkos' dlopen
    starts the tool; same counts."""
    outdir = tempfile.mkdtemp(prefix="gputool-kokkos-")
    code0, out0, _ = run([EXE])
    code1, out1, err1 = run([EXE], env={"KOKKOS_TOOLS_LIBS": LIB, "GPUTOOL_OUTPUT": outdir})
    check(code0 == code1 == 0 and out0 == out1, "exit %d %d, stdout %r vs %r" % (code0, code1, out0, out1))
    p = one_profile(GPUTOOL, outdir)
    for path, count, _ in EXPECT[:3]:
        n = node_at(p, path)
        check(p.excl(n, "REGION_COUNT") == count, "%s: REGION_COUNT %s" % (path[-1], p.excl(n, "REGION_COUNT")))


def test_misuse():
    """Ends, pops and stops with nothing open, NULL names, regions left
    open at exit: the program's output and exit status stand, and the
    profile is written."""
    outdir, _ = run_gputool(GPUTOOL, EXE, ["misuse"])
    p = one_profile(GPUTOOL, outdir)
    # Each opened inside the ones still open before it (the deep copy is
    # never closed: its end came before it began).
    path = ["main", "misuse", '<kokkos parallel_for "">', '<kokkos parallel_reduce "no id">', '<kokkos region "">',
            '<kokkos deep_copy " <- ">', '<kokkos parallel_for "left open">', '<kokkos region "left open">']
    for k in range(3, len(path) + 1):
        n = node_at(p, path[:k])
        check(p.excl(n, "REGION_COUNT") == 1, "%s: REGION_COUNT %s (left open: closed at exit)" %
              (path[k - 1], p.excl(n, "REGION_COUNT")))


main([("labels, counts, nesting, split and outputs under gputool run", test_all),
      ("a program that misuses the interface", test_misuse),
      ("KOKKOS_TOOLS_LIBS without the launcher", test_dlopen_only)])
