# SPDX-License-Identifier: MIT
"""NVTX ranges as context nodes (docs/NVTX.md), through `gputool run`:
samples/nvtx/ranges opens ranges with known counts, nesting and CPU time
(which it measures itself, on its thread's CPU-time clock); samples/nvtx/omp
runs OpenMP parallel regions inside a range.
Usage: test_nvtx.py BUILD_DIR

GT_NVTX_BACKENDS (for checking the test itself): the --backends list passed
to gputool run; "omp,acc,cuda,opencl" is what gputool run measured before
NVTX was a layer, and every check of ranges must then fail."""
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from gtrun import check, main, one_profile, own_times, run  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
GPUTOOL = os.path.join(BUILD, "gputool")
RANGES = os.path.join(BUILD, "samples", "nvtx", "ranges")
OMP = os.path.join(BUILD, "samples", "nvtx", "omp")
BACKENDS = os.environ.get("GT_NVTX_BACKENDS")
# Sampled CPU time against what the program measured: a period or two at
# each range's edges, summed over its calls; also holds on a loaded machine.
REL = 0.25

LABEL = {
    "solve": '<nvtx "solve">',
    "setup": '<nvtx "setup">',
    "smooth": '<nvtx "smooth">',
    "assemble": '<nvtx solver "assemble" [Compute]>',
    "io": '<nvtx "io">',
    "phase": '<nvtx "phase">',
    "wide": '<nvtx "wide \u00fcber">',
    "handoff": '<nvtx "handoff">',
    "mark": '<nvtx mark "checkpoint">',
}
COUNTS = {"solve": 30, "setup": 10, "smooth": 30, "assemble": 4, "io": 1, "phase": 1, "wide": 1,
          "handoff": 1}


def gputool_run(outdir, exe, args=()):
    """`gputool run` against the bare program: same stdout and exit code."""
    code0, out0, _ = run([exe, *args])
    cmd = [GPUTOOL, "run", "-o", outdir]
    if BACKENDS:
        cmd += ["--backends", BACKENDS]
    code1, out1, err1 = run(cmd + ["--", exe, *args])
    check(code0 == code1 == 0, "exit status %d bare, %d under gputool run" % (code0, code1))
    check(out0 == out1, "stdout changed:\n%r\nvs\n%r" % (out0, out1))
    return err1


def one(p, key):
    got = p.find(LABEL[key])
    check(len(got) == 1, "%s: %d nodes, expected one (names: %s)" %
          (LABEL[key], len(got), sorted({n.get("name") for n in p.doc["nodes"]
                                         if (n.get("name") or "").startswith("<nvtx")})))
    return got[0]


def test_ranges(tmp):
    outdir = os.path.join(tmp, "ranges")
    err = gputool_run(outdir, RANGES)
    own = own_times(err, "nvtx times: ")[None]
    p = one_profile(GPUTOOL, outdir)

    # Counts, exact, on each range's own node.
    for key, n in COUNTS.items():
        node = one(p, key)
        check(p.excl(node, "REGION_COUNT") == n, "%s: REGION_COUNT %d, expected %d" %
              (LABEL[key], p.excl(node, "REGION_COUNT"), n))
        check(p.excl(node, "REGION_TIME") > 0, "%s: no REGION_TIME" % LABEL[key])
    check(p.excl(one(p, "handoff"), "NVTX_ENDED_ELSEWHERE") == 1, "handoff: not counted as ended elsewhere")
    check(p.excl(one(p, "solve"), "NVTX_ENDED_ELSEWHERE") == 0, "solve: counted as ended elsewhere")
    mark = one(p, "mark")
    check(p.excl(mark, "NVTX_MARKS") == 10, "checkpoint: NVTX_MARKS %d, expected 10" % p.excl(mark, "NVTX_MARKS"))

    # Nesting, as paths from the root (the NVTX API's own frames elided).
    paths = {
        "solve": ["main", "solve", LABEL["solve"]],
        "smooth": ["main", "solve", LABEL["solve"], "smooth", LABEL["smooth"]],
        "setup": ["main", "setup", LABEL["setup"]],
        "mark": ["main", "setup", LABEL["setup"], LABEL["mark"]],
        "assemble": ["main", "assemble", LABEL["assemble"]],
        # pushed in begin_phase() while "io" was open, popped in end_phase()
        "phase": ["main", LABEL["io"], "begin_phase", LABEL["phase"]],
        "wide": ["main", LABEL["wide"]],
    }
    for key, want in paths.items():
        got = p.names(one(p, key))
        check(got == want, "%s: path %s, expected %s" % (LABEL[key], " > ".join(got), " > ".join(want)))

    # CPU time of each range against the program's own measurement.
    # Two samples either side: each up to a timer tick late.
    period = p.sample_weight()
    cpu = {k: p.incl(one(p, k), "CPUTIME") for k in ("solve", "setup", "smooth", "phase", "assemble")}
    for k, v in cpu.items():
        mine = own[k + "_ns"]
        print("  %-10s sampled %7.1f ms, the program measured %7.1f ms" % (k, v / 1e6, mine / 1e6))
        check(abs(v - mine) <= REL * mine + 2 * period,
              "%s: %.1f ms sampled, the program measured %.1f ms" % (k, v / 1e6, mine / 1e6))
    # The 3:1 split of solve and setup, as the program measured it.
    want = own["solve_ns"] / own["setup_ns"]
    got = cpu["solve"] / max(cpu["setup"], 1)
    print("  solve:setup sampled %.2f, measured %.2f" % (got, want))
    check(abs(got - want) <= REL * want, "solve:setup %.2f sampled, %.2f measured" % (got, want))

    # Labels read as written in the text report and the folded export.
    code, text, e = run([GPUTOOL, "report", outdir, "--top", "200"])
    check(code == 0, "gputool report: %s" % e)
    for key in ("solve", "smooth", "assemble", "wide"):
        check(LABEL[key] in text, "%s not in the text report" % LABEL[key])
    code, folded, e = run([GPUTOOL, "report", outdir, "--format", "folded"])
    check(code == 0, "gputool report --format folded: %s" % e)
    # frames read "func (file:line)"
    stacks = [[re.sub(r" \(\S+:\d+\)$", "", f) for f in l.rsplit(" ", 1)[0].split(";")]
              for l in folded.splitlines() if not l.startswith("#")]
    check(any(s[:5] == paths["smooth"] for s in stacks),
          "no folded stack starts %s:\n%s" % (";".join(paths["smooth"]), folded))


def test_openmp_inside(tmp):
    """A parallel region inside a range: its construct hangs under the range."""
    outdir = os.path.join(tmp, "omp")
    gputool_run(outdir, OMP)
    p = one_profile(GPUTOOL, outdir)
    step = p.find('<nvtx "step">')
    check(len(step) == 1, "no single <nvtx \"step\"> node")
    check(p.excl(step[0], "REGION_COUNT") == 5, "step: REGION_COUNT %d, expected 5" % p.excl(step[0], "REGION_COUNT"))
    par = p.find("<omp parallel>")
    check(par and all(p.names(n)[:4] == ["main", "step", '<nvtx "step">', "<omp parallel>"] for n in par),
          "<omp parallel> not under the range: %s" % [" > ".join(p.names(n)) for n in par])
    cpu = p.incl(step[0], "CPUTIME")
    check(cpu >= 0.8 * p.total("CPUTIME"), "the range holds %.1f ms of %.1f ms" %
          (cpu / 1e6, p.total("CPUTIME") / 1e6))


def test_users_injection(tmp):
    """A user's own NVTX_INJECTION64_PATH (another tool) is kept, with a note;
    the program runs as it does under that tool alone."""
    other = os.path.join(BUILD, "bench", "nvtx", "libgtnvtxnull.so")
    check(os.path.exists(other), "no %s: build the bench_nvtx_null target" % other)
    env = {"NVTX_INJECTION64_PATH": other}
    code0, out0, _ = run([RANGES, "2"], env=env)
    outdir = os.path.join(tmp, "users")
    opts = ["--backends", BACKENDS] if BACKENDS else []
    code1, out1, err1 = run([GPUTOOL, "run", "-o", outdir] + opts + ["--", RANGES, "2"], env=env)
    check(code0 == code1 == 0 and out0 == out1, "exit or stdout changed: %d %r vs %d %r" % (code0, out0, code1, out1))
    check("NVTX_INJECTION64_PATH is set to %s" % other in err1, "no note of the kept setting: %r" % err1)
    p = one_profile(GPUTOOL, outdir)
    check(not [n for n in p.doc["nodes"] if (n.get("name") or "").startswith("<nvtx")],
          "range nodes while another tool holds NVTX")


if __name__ == "__main__":
    TMP = tempfile.mkdtemp(prefix="gputool-e2e-nvtx-")
    main([("ranges", lambda: test_ranges(TMP)), ("openmp_inside", lambda: test_openmp_inside(TMP)),
          ("users_injection", lambda: test_users_injection(TMP))])
