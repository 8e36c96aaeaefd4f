# SPDX-License-Identifier: MIT
"""Parallel regions' teams, timed each or, for a construct of short regions,
by sampling (GPUTOOL_REGION_TIME_NS, GPUTOOL_EXACT_TIMING, docs/REPORT.md),
on 2 threads, under libgputool.so, against the work time the program
measures itself.

  test_region_timing.py BUILD_DIR sampled   the long regions timed each, the
                                            short ones sampled and listed
  test_region_timing.py BUILD_DIR exact     GPUTOOL_EXACT_TIMING=1: every
                                            region timed, no sampled construct
"""
import glob
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from gtrun import bounded, check, main, one_profile, own_times, run  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
MODE = sys.argv[2]
LIB = os.path.join(BUILD, "libgputool.so")
GPUTOOL = os.path.join(BUILD, "gputool")
EXE = os.path.join(BUILD, "tests", "omp-regions", "region_timing")
THREADS, SHORT_N, SHORT_US, LONG_N = 2, 3000, 4, 20
CALIBRATE, SAMPLE_EVERY = 16, 16  # ompt/ompt-internal.h
SECTION = "Parallel regions timed by sampling"
# KMP_FORCE_REDUCTION=critical: libomp reports a reduction step per thread
# (with atomics, its choice for teams of up to 4, it reports none).
# GPUTOOL_REGION_TIME_NS: a threshold between the two constructs' mean
# regions, the long ones' at least LONG_US = 10 ms, the short ones' 50 to
# 150 us on a loaded 2-core machine (a fork and join alone, there, over
# the default's 20 us). Over the first 16, the team's start among them,
# the short ones mostly stay under 8 ms on a machine so busy that a thread
# waits a time slice for its core at some regions (with 2 ms, 3 runs in
# 40 beside the whole suite judged them long; a region counts at most
# four thresholds). Where they do not, the program's own times of them say
# so, and the run is taken again (first_mean).
THRESHOLD_NS = 8000000
ENV = {"OMP_NUM_THREADS": str(THREADS), "KMP_FORCE_REDUCTION": "critical", "SAMPLE_TIMES": "1",
       "GPUTOOL_REGION_TIME_NS": str(THRESHOLD_NS)}
RUNS = 4


def constructs(p):
    """{function holding it: <omp parallel> node}, one node each."""
    out = {}
    for n in p.find("<omp parallel>"):
        fn = [m.get("function") or m.get("name") for m in p.path(n)
              if m.get("kind") in ("frame", "tail", "inline")][-1]
        check(fn not in out, "two contexts of the construct in %s" % fn)
        out[fn] = n
    check(sorted(out) == ["long_regions", "short_regions"], "parallel constructs: %s" % sorted(out))
    return out


def below(p, node, metric, name=None):
    """metric summed over node's subtree (only at nodes called name, if given)."""
    return sum(p.excl(n, metric) for n in [node] + p.descendants(node) if name is None or n.get("name") == name)


def run_tool(extra):
    code, want, err = run([EXE], env=ENV)
    check(code == 0, "region_timing failed without the tool: %s" % err)
    outdir = tempfile.mkdtemp(prefix="gputool-region-timing-")
    code, out, err = run([EXE], env=dict(ENV, OMP_TOOL_LIBRARIES=LIB, GPUTOOL_OUTPUT=outdir, **extra))
    check(code == 0, "exit %d under the tool: %s" % (code, err[-2000:]))
    check(out == want, "stdout changed under the tool:\n%s\nvs\n%s" % (out, want))
    # A variable the library does not know is reported on stderr.
    check(not any(k in err for k in list(extra) + ["GPUTOOL_REGION_TIME_NS"]),
          "the library did not take a variable: %s" % err[-2000:])
    texts = glob.glob(os.path.join(outdir, "*.txt"))
    check(len(texts) == 1, "one report in %s: %s" % (outdir, texts))
    # The JSON report's regions: the regions timed as samples of each.
    code, js, jerr = run([GPUTOOL, "report", glob.glob(os.path.join(outdir, "*.gtprof"))[0], "--format", "json"])
    check(code == 0, "gputool report --format json: %s" % jerr[-2000:])
    samples = {("short_regions" if "short_regions" in r["where"] else "long_regions"): r["time_samples"]
               for r in json.loads(js)["regions"]["rows"]}
    return (one_profile(GPUTOOL, outdir), own_times(err, "region_timing times:"), open(texts[0]).read(),
            samples, first_mean(err), err)


def first_mean(err):
    """The mean of the short construct's first CALIBRATE regions as the
    program timed them, each counted up to four thresholds as the tool
    counts it: what the tool judged the construct by, and a little more
    (the program's clock reads are around the construct, the tool's
    inside)."""
    line = [l for l in err.splitlines() if l.startswith("region_timing first:")]
    check(len(line) == 1, "no 'region_timing first:' line on stderr")
    ns = [int(v) for v in line[0].split(":")[1].split()]
    check(len(ns) == CALIBRATE, "the program timed %d first regions, not %d" % (len(ns), CALIBRATE))
    return sum(min(v, 4 * THRESHOLD_NS) for v in ns) / len(ns)


def check_counts(p):
    """What sampling leaves exact: the regions, and every member's waits,
    worksharing loops and reduction steps."""
    c = constructs(p)
    for fn, n in (("short_regions", SHORT_N), ("long_regions", LONG_N)):
        got = (p.excl(c[fn], "OMP_PAR_COUNT"), p.excl(c[fn], "OMP_PAR_THREADS"),
               below(p, c[fn], "OMP_WAIT_COUNT", "<omp implicit barrier>"))
        check(got == (n, n * THREADS, n * THREADS), "%s: regions, members, barrier waits %s" % (fn, got))
    s = c["short_regions"]
    got = (below(p, s, "OMP_WS_COUNT"), below(p, s, "OMP_REDUCTION_COUNT"), below(p, s, "OMP_WAIT_COUNT"))
    check(got == (SHORT_N * THREADS,) * 3, "short_regions: loops, reduction steps, waits %s" % (got,))
    return c


def check_long(p, c, own):
    # Timed each: the members' work covers their bodies, and little more.
    check(below(p, c["long_regions"], "OMP_PAR_TIME_SAMPLES") == 0, "long regions sampled")
    w = p.excl(c["long_regions"], "OMP_WORK")
    bounded(w, own["long"]["work_ns"], 1.5 * own["long"]["work_ns"] + 20e6, "long regions' work")


def section_of(text):
    check(SECTION in text, "no %r section in the report" % SECTION)
    return text[text.index(SECTION):].split("\n\n")[0]


def region_rows(text):
    """The work cells of "OpenMP parallel regions" by the function each
    row's region is in, and whether the table says what "~" means."""
    table = text[text.index("OpenMP parallel regions"):].split("\n\n")[0]
    lines = table.splitlines()
    rows = {}
    for i, l in enumerate(lines):
        cells = l.split()
        if len(cells) == 9 and cells[0].isdigit() and i + 1 < len(lines):
            fn = "short_regions" if "short_regions" in lines[i + 1] else "long_regions"
            rows[fn] = cells[5:8]
    return rows, "(~: work and wait estimated" in table


def test_sampled():
    # Region n (from 0) of the construct's context is timed in full while
    # n < 16, then timed as a sample when n % 16 == 8 (24, 40, ...).
    want = sum(1 for n in range(CALIBRATE, SHORT_N) if n % SAMPLE_EVERY == SAMPLE_EVERY // 2)
    for attempt in range(1, RUNS + 1):
        p, own, text, samples, mean, _ = run_tool({})
        c = check_counts(p)
        check_long(p, c, own)
        got = p.excl(c["short_regions"], "OMP_PAR_TIME_SAMPLES")
        print("  run %d: the first %d short regions %.3f ms each as the program timed them, %d samples" %
              (attempt, CALIBRATE, mean / 1e6, got))
        # Judged long only where the program saw them near the threshold;
        # judged short only where they were under it.
        check(got == want == 186 or (got == 0 and mean >= 0.75 * THRESHOLD_NS),
              "short regions timed as samples: %d, want %d" % (got, want))
        check(got == 0 or mean < 1.25 * THRESHOLD_NS, "sampled, though the program timed the first regions "
              "at %.3f ms each" % (mean / 1e6))
        if got:
            break
    check(got == want, "the machine held up the first short regions in each of %d runs" % RUNS)
    check(samples == {"short_regions": want, "long_regions": 0}, "JSON regions' time_samples: %s" % samples)
    check(p.total("OMP_PAR_TIME_SAMPLES") == want, "samples elsewhere than the short construct")
    # The estimate: the 16 regions timed in full and each sample times 16.
    # Every member's work in a timed region holds its spin of SHORT_US,
    # which lasts that long of wall time however loaded the machine is: a
    # bound below that cannot fail. Above, the program's own estimate of
    # the same regions (est_ns: a sample the machine held up weighs 16
    # times there too), the runtime's own part of each implicit task
    # (under 1 us against the spin's 4) within 2x, and one sample held up
    # outside its body (max_ns bounds it).
    w = p.excl(c["short_regions"], "OMP_WORK")
    mine = own["short"]
    floor = (CALIBRATE + SAMPLE_EVERY * want) * THREADS * SHORT_US * 1000
    print("  short regions: estimated work %.2f ms, the program's %.2f ms (its estimate %.2f ms, longest %.3f ms), "
          "floor %.2f ms" % (w / 1e6, mine["work_ns"] / 1e6, mine["est_ns"] / 1e6, mine["max_ns"] / 1e6,
                             floor / 1e6))
    bounded(w, floor, 2 * mine["est_ns"] + SAMPLE_EVERY * mine["max_ns"], "short regions' estimated work")
    # The report lists the short construct, and only it, with its exact
    # count and the samples.
    section = section_of(text)
    rows = [l for l in section.splitlines()[2:] if "<omp parallel>" in l]
    check(len(rows) == 1 and "short_regions" in rows[0] and "long_regions" not in section,
          "sampled section:\n%s" % section)
    cells = rows[0].split()
    check(cells[0] == str(SHORT_N) and cells[3] == str(want), "sampled row: %s" % rows[0])
    check("(1 of 2 contexts of parallel constructs" in section, "sampled section's title:\n%s" % section)
    # The regions' table marks the short construct's work and wait as
    # estimates, and only those.
    rows, told = region_rows(text)
    check(told and all(v.startswith("~") for v in rows["short_regions"]) and
          not any(v.startswith("~") for v in rows["long_regions"]), "regions' table: %s" % rows)


def frames_line(err):
    """(asked, read) of the verbose line on implicit tasks' exit frames."""
    line = [l for l in err.splitlines() if "task exit frames:" in l]
    check(len(line) == 1, "no 'task exit frames' line on stderr:\n%s" % err[-2000:])
    m = re.search(r"(\d+) asked of the runtime, (\d+) read", line[0])
    check(m is not None, "exit frames line: %s" % line[0])
    return int(m.group(1)), int(m.group(2))


def test_exact():
    p, own, text, samples, _, err = run_tool({"GPUTOOL_EXACT_TIMING": "1", "GPUTOOL_VERBOSE": "2"})
    # Each member's implicit task needs its exit frame at its first
    # construct: asked of the runtime until 16 answers agreed where it
    # lies beside the task's data, then read there, and asked all the
    # same once in 64 (ompt/host.c).
    asked, read = frames_line(err)
    tasks = SHORT_N * THREADS
    print("  implicit tasks' exit frames: %d asked, %d read (%d short regions' tasks)" % (asked, read, tasks))
    check(asked + read >= tasks and read > 0 and asked <= 16 + (asked + read) // 64 + THREADS,
          "exit frames asked %d, read %d, for %d implicit tasks" % (asked, read, tasks))
    c = check_counts(p)
    check_long(p, c, own)
    check(p.total("OMP_PAR_TIME_SAMPLES") == 0, "regions sampled under GPUTOOL_EXACT_TIMING=1")
    check(samples == {"short_regions": 0, "long_regions": 0}, "JSON regions' time_samples: %s" % samples)
    check(SECTION not in text, "a sampled section under GPUTOOL_EXACT_TIMING=1")
    rows, told = region_rows(text)
    check(not told and len(rows) == 2 and not any(v.startswith("~") for r in rows.values() for v in r),
          "regions' table under GPUTOOL_EXACT_TIMING=1: %s" % rows)
    w = p.excl(c["short_regions"], "OMP_WORK")
    bounded(w, own["short"]["work_ns"], 2 * own["short"]["work_ns"] + 20e6, "short regions' work")


if __name__ == "__main__":
    main({"sampled": [("long regions timed each, short ones sampled", test_sampled)],
          "exact": [("GPUTOOL_EXACT_TIMING=1: every region timed", test_exact)]}[MODE])
