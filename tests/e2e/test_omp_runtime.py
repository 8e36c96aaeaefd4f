# SPDX-License-Identifier: MIT
"""CPU time in the OpenMP runtime, end to end: barrier_split.c runs under
libgputool.so; a sample taken while a thread waits at a barrier must hang
under that barrier's node, one taken while a worker waits for the next
region under <omp idle>, and none on <omp parallel> itself (the runtime's
own time there is <omp runtime: fork/join>). Shares are checked against the
CPU time the program's threads measured themselves around their waits.
Usage: test_omp_runtime.py BUILD_DIR BARRIER_SPLIT"""
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
import gtrun  # noqa: E402
from gtrun import check, main, own_times, run_under_tool  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
EXE = os.path.abspath(sys.argv[2])
LIB = os.path.join(BUILD, "libgputool.so")
GPUTOOL = os.path.join(BUILD, "gputool")
REGIONS = "100"
WAITS = ("<omp barrier>", "<omp implicit barrier>")
RUNTIME = "<omp runtime: fork/join>"
_run = {}


def profile():
    """One run, shared by the tests: (profile, what the program measured)."""
    if not _run:
        outdir, err = run_under_tool(LIB, EXE, [REGIONS], env={"GPUTOOL_SAMPLE_HZ": "1000"})
        _run["p"] = gtrun.one_profile(GPUTOOL, outdir)
        _run["own"] = own_times(err, "barrier_split times:")
        txt = [f for f in os.listdir(outdir) if f.endswith(".txt")]
        check(len(txt) == 1, "expected one text report in %s" % outdir)
        _run["text"] = open(os.path.join(outdir, txt[0])).read()
    return _run["p"], _run["own"]


def region(p, phase):
    rs = [n for n in p.find("<omp parallel>") if phase in p.names(n)]
    check(len(rs) == 1, "expected one <omp parallel> under %s, found %d" % (phase, len(rs)))
    return rs[0]


def cpu_under(p, node, names):
    return sum(p.excl(n, "CPUTIME") for n in p.descendants(node) if n.get("name") in names)


def tolerance(p, own_ns):
    """How far sampled CPU time may lie from the program's own figure: a
    quarter of it (a sample lands up to a timer tick after its expiration,
    and the program's clock reads are inside its waits), four standard
    deviations of a count of samples of the profile's mean weight (the
    kernel fires CPU-time timers at its ticks: a sample may carry several
    periods), and two samples."""
    w = p.total("CPUTIME") / max(1, p.total("SAMPLES"))
    return 0.25 * own_ns + 4 * math.sqrt(own_ns / w + 1) * w + 2 * w


def test_no_time_on_parallel():
    """What ran in no user frame is the runtime's: a wait's, idle, or
    <omp runtime: fork/join> under its region; never <omp parallel>'s."""
    p, _ = profile()
    for phase in ("explicit_wait", "implicit_wait", "gaps", "forks"):
        r = region(p, phase)
        check(p.excl(r, "CPUTIME") == 0,
              "%s: %.1f ms exclusive at <omp parallel>" % (phase, p.excl(r, "CPUTIME") / 1e6))
    for n in p.find(RUNTIME):
        parent = p.nodes[n["parent"]]
        check(parent.get("name") == "<omp parallel>", "%s under %s" % (RUNTIME, "/".join(p.names(n))))


def test_barrier_share():
    """The CPU time the threads spent at the explicit barrier and at the
    regions' implicit barriers (each timed by the waiting thread itself)
    is on those barriers' nodes, and is the same share of the regions'."""
    p, own = profile()
    tool = mine = tool_all = mine_all = 0
    for phase in ("explicit_wait", "implicit_wait"):
        r = region(p, phase)
        tool += cpu_under(p, r, WAITS)
        tool_all += p.incl(r, "CPUTIME")
        mine += own[phase]["wait_cpu_ns"]
        mine_all += own[phase]["wait_cpu_ns"] + own[phase]["work_cpu_ns"]
    tol = tolerance(p, mine)
    print("  barriers: tool %.1f ms (%.1f %% of the regions), program %.1f ms (%.1f %%), tolerance %.1f ms"
          % (tool / 1e6, 100 * tool / tool_all, mine / 1e6, 100 * mine / mine_all, tol / 1e6))
    check(abs(tool - mine) <= tol,
          "barrier CPU time %.1f ms, the threads measured %.1f ms (tolerance %.1f)" % (tool / 1e6, mine / 1e6, tol / 1e6))
    # The same as shares: the regions' CPU time is the program's work and
    # waits, up to the same tolerance.
    check(abs(tool_all - mine_all) <= tolerance(p, mine_all),
          "regions' CPU time %.1f ms, the threads measured %.1f ms" % (tool_all / 1e6, mine_all / 1e6))
    check(abs(tool / tool_all - mine / mine_all) <= (tol + tolerance(p, mine_all)) / mine_all,
          "barrier share %.3f, the program's %.3f" % (tool / tool_all, mine / mine_all))


def test_waiting_for_work():
    """A worker between regions waits for work, in the state of the last
    region's barrier (libomp reports its end at the next fork): what it
    spins from its return from one region's body to its entry into the
    next is that barrier's or <omp idle>'s, never the region's. <omp idle>
    holds other phases' idle workers too: a lower bound."""
    p, own = profile()
    r = region(p, "gaps")
    idle = sum(p.excl(n, "CPUTIME") for n in p.find("<omp idle>"))
    tool = idle + cpu_under(p, r, WAITS)
    mine = own["gaps"]["between_cpu_ns"]
    tol = tolerance(p, mine)
    print("  between regions: tool %.1f ms (idle %.1f), program %.1f ms, tolerance %.1f ms"
          % (tool / 1e6, idle / 1e6, mine / 1e6, tol / 1e6))
    check(tool >= mine - tol, "waiting for work: %.1f ms, the thread measured %.1f ms (tolerance %.1f)"
          % (tool / 1e6, mine / 1e6, tol / 1e6))
    # The region holds its work and its barrier, not the wait for work.
    work = own["gaps"]["work_cpu_ns"]
    inside = p.incl(r, "CPUTIME") - cpu_under(p, r, WAITS)
    check(abs(inside - work) <= tolerance(p, work),
          "gaps region without its barrier: %.1f ms, its work %.1f ms" % (inside / 1e6, work / 1e6))


def test_forks_are_runtime():
    """Empty regions: their CPU time is the runtime's, on its nodes."""
    p, _ = profile()
    r = region(p, "forks")
    total = p.incl(r, "CPUTIME")
    rt = cpu_under(p, r, WAITS + (RUNTIME,))
    check(total > 0, "no CPU time in the empty regions")
    check(rt >= 0.8 * total - 2 * p.total("CPUTIME") / max(1, p.total("SAMPLES")),
          "empty regions: %.1f of %.1f ms on the runtime's nodes" % (rt / 1e6, total / 1e6))


def test_report_says_so():
    """The text report tells what the runtime's nodes mean under the CPU
    table, and the waits table gives each wait's CPU time: the explicit
    barrier's row has what its node has."""
    p, _ = profile()
    text = _run["text"]
    check("threads spinning in the OpenMP runtime" in text and "<omp runtime: fork/join>: the runtime" in text,
          "no line on the OpenMP runtime's nodes under the CPU table")
    m = re.search(r"\nWaits .*\n\s+wait s .*CPU s\s+where.*\n((?:  .*\n)+)", text)
    check(m, "no CPU s column in the waits table")
    bar = [n for n in p.find("<omp barrier>") if "explicit_wait" in p.names(n)]
    check(len(bar) == 1, "one <omp barrier> under explicit_wait")
    rows = [l for l in m.group(1).splitlines() if "<omp barrier>" in l]
    check(len(rows) == 1, "one <omp barrier> row in the waits table: %s" % rows)
    cpu = float(re.split(r"\s{2,}", rows[0].strip(), maxsplit=6)[5])
    check(abs(cpu * 1e9 - p.incl(bar[0], "CPUTIME")) < 1e6,
          "waits table: %.3f s of CPU at the barrier, its node %d ns" % (cpu, p.incl(bar[0], "CPUTIME")))


if __name__ == "__main__":
    main([(n, f) for n, f in sorted(globals().items()) if n.startswith("test_")])
