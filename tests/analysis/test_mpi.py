#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""MPI + OpenMP end to end: samples/mpi/imbalance, where rank r does r + 1
units of OpenMP work, run as `mpirun -np 4 gputool run -- imbalance`.

Usage: test_mpi.py BUILD_DIR MPIRUN [MPIRUN FLAGS...]

The merged report must show each rank's parallel regions (exactly 1, 2,
3, 4); each rank's CPU time in the work context equal to the CPU time the
rank measured itself there (SAMPLE_TIMES=1), up to the sampling period at
each end of the stretches it measured and its CPU time around them, so that
it holds on a busy machine and still tells a tool that reports half or
double; the imbalance (max/mean) and the rank with the most as computed from
those per-rank values and within what the ranks' own times allow; every
rank writes its own files into the one directory; the application's exit
status comes back through gputool run and mpirun; `mpirun gputool report`
gives the same report as one process."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runenv import check, failures, sanitized  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
MPIRUN = sys.argv[2:]
SANITIZED = sanitized(BUILD)
GPUTOOL = os.path.join(BUILD, "gputool")
APP = os.path.join(BUILD, "samples", "mpi", "imbalance")
RANKS = 4
UNIT = "200000000"  # iterations per unit of work: about 0.15 s of CPU
HZ = 1000
# The clocks of tool and program: exact up to this.
SLACK_REL, SLACK_NS = 0.01, 1000000


def env(**more):
    e = {k: v for k, v in os.environ.items() if not k.startswith("GPUTOOL_") and k != "OMP_TOOL_LIBRARIES"}
    # Idle OpenMP threads and MPI ranks that wait give their CPU away.
    e.update(OMP_NUM_THREADS="2", KMP_BLOCKTIME="0", **more)
    return e


def mpirun(n, args, timeout=600, **more):
    return subprocess.run(MPIRUN + ["-np", str(n)] + args, capture_output=True, text=True, env=env(**more),
                          timeout=timeout)


def own_times(err):
    """Each rank's line "imbalance times: rank R cpu_ns C out_ns O units U
    threads T" on stderr: {R: {"cpu_ns": C, ...}}."""
    own = {}
    for line in err.splitlines():
        if line.startswith("imbalance times: "):
            w = line.split()[2:]
            d = {w[i]: int(w[i + 1]) for i in range(0, len(w) - 1, 2)}
            own[d["rank"]] = d
    return own


def own_bounds(d, period):
    """What a sampler's CPU time in work() may be on one rank, from the
    rank's own measurements. Each measured stretch ends just after an
    expiration of a CPU-time timer of the thread's own, when the sampler's
    timer on the thread has fired too: its samples carried all but at most a
    period of the stretch (the first sample after it, and one taken in the
    tool's callbacks at a fork or join, carry the rest elsewhere). What they
    may carry into work() from before a stretch is the CPU time measured
    around the stretches (out_ns) and a period. So, per thread and unit and
    once more for the main thread's whole work(): up to two periods."""
    margin = d["out_ns"] + 2 * d["threads"] * (d["units"] + 1) * period
    return d["cpu_ns"] - margin, d["cpu_ns"] + margin


def within(value, lo, hi):
    return lo * (1 - SLACK_REL) - SLACK_NS <= value <= hi * (1 + SLACK_REL) + SLACK_NS


def work_node(doc):
    """The frame of main at its call of work(), which holds all of work():
    work() has a frame per line sampled in it."""
    byid = {n["id"]: n for n in doc["nodes"]}
    calls = {n["parent"] for n in doc["nodes"] if n["name"] == "work" and n["kind"] == "frame" and
             n["parent"] is not None and byid[n["parent"]]["name"] == "main"}
    check(len(calls) == 1, "main calls work from %d places" % len(calls))
    return byid[calls.pop()] if len(calls) == 1 else None


def main():
    tmp = tempfile.mkdtemp(prefix="gt-mpi-")
    out = os.path.join(tmp, "run")
    # CPU time only: wall-clock sampling costs CPU time in every period of
    # wall time, the tool's and counted so, yet part of what the ranks
    # measure as their work; on a busy machine the work's wall time, and so
    # that cost, grows (see the wall-clock run below).
    p = mpirun(RANKS, [GPUTOOL, "run", "-o", out, "--sample-hz", str(HZ), "--", APP, UNIT], SAMPLE_TIMES="1")
    if not check(p.returncode == 0 and "imbalance: 4 ranks" in p.stdout, "the run failed (%d): %s" %
                 (p.returncode, p.stderr[-3000:])):
        sys.exit(1)
    profiles = sorted(f for f in os.listdir(out) if f.endswith(".gtprof"))
    ranks = sorted(int(f.split("-")[-2]) for f in profiles)
    check(ranks == list(range(RANKS)), "profiles %s: one per rank expected" % profiles)
    # A profile and a report per rank, and the job's mark (one run, one directory).
    check(len(set(profiles)) == RANKS and len(os.listdir(out)) == 2 * RANKS + 1 and
          open(os.path.join(out, ".gputool-run")).read(), "files %s" % os.listdir(out))
    # One line for the run, from rank 0: the directory and how to merge it;
    # no rank prints a report line of its own.
    said = [l for l in p.stderr.splitlines() if l.startswith("gputool: ")]
    check(said == ["gputool: the %d ranks' profiles are in %s; merge them with `gputool report %s`"
                   " (rank 0's own report: %s.txt)" % (RANKS, out, out, os.path.join(out, profiles[0][:-7]))],
          "the lines at exit: %s" % said)

    r = subprocess.run([GPUTOOL, "report", out, "--format", "json"], capture_output=True, text=True)
    if not check(r.returncode == 0, "report: %s" % r.stderr):
        sys.exit(1)
    doc = json.loads(r.stdout)
    check([x["rank"] for x in doc["processes"]] == list(range(RANKS)), "processes %s" % doc["processes"])
    w = work_node(doc)
    # Exact: one parallel region per unit, r + 1 on rank r.
    regions = [n for n in doc["nodes"] if n["name"] == "<omp parallel>" and "OMP_PAR_COUNT" in n["metrics"]]
    if check(len(regions) == 1, "expected one parallel region, found %d" % len(regions)):
        c = regions[0]["metrics"]["OMP_PAR_COUNT"]["excl"]
        check(regions[0]["metrics"]["OMP_PAR_COUNT"]["per_process"] == list(range(1, RANKS + 1)),
              "regions per rank %s" % regions[0]["metrics"]["OMP_PAR_COUNT"]["per_process"])
        check(abs(c["imbalance"] - 2.0 * RANKS / (RANKS + 1)) < 1e-9, "region count imbalance %s" % c["imbalance"])
    if check(w is not None and "CPUTIME" in w["metrics"], "no main > work context with CPU time"):
        c = w["metrics"]["CPUTIME"]
        per = c["per_process"]
        print("work CPU time per rank (ms): %s; imbalance %.3f" % ([round(v / 1e6, 1) for v in per],
                                                                   c["incl"]["imbalance"]))
        own = own_times(p.stderr)
        if not check(sorted(own) == list(range(RANKS)), "own times of ranks %s: %s" % (sorted(own), p.stderr[-3000:])):
            sys.exit(1)
        period = 1e9 / HZ
        bounds = [own_bounds(own[k], period) for k in range(RANKS)]
        for k in range(RANKS):
            d, (lo, hi) = own[k], bounds[k]
            print("  rank %d: sampled %.1f ms; the rank measured %.1f ms (%.1f ms around), bounds %.1f..%.1f ms" %
                  (k, per[k] / 1e6, d["cpu_ns"] / 1e6, d["out_ns"] / 1e6, lo / 1e6, hi / 1e6))
            check(d["units"] == k + 1 and d["threads"] == 2, "rank %d measured %s" % (k, d))
            # The bounds tell half from double: they hold a tool's error.
            check(hi - lo < d["cpu_ns"] / 2, "rank %d: bounds %.1f..%.1f ms too wide for %.1f ms to tell" %
                  (k, lo / 1e6, hi / 1e6, d["cpu_ns"] / 1e6))
            check(within(per[k], lo, hi), "rank %d: %.1f ms sampled in work, expected %.1f..%.1f ms" %
                  (k, per[k] / 1e6, lo / 1e6, hi / 1e6))
        # The imbalance and the rank with the most follow from the per-rank
        # values exactly, and lie within what the ranks' own times allow.
        mean = sum(per) / RANKS
        check(abs(c["incl"]["imbalance"] - max(per) / mean) <= 1e-5 * max(per) / mean,
              "imbalance %.6f, max/mean of %s" % (c["incl"]["imbalance"], per))
        los, his = [b[0] for b in bounds], [b[1] for b in bounds]
        lo_imb = max(los) / (sum(his) / RANKS) * (1 - 3 * SLACK_REL)
        hi_imb = max(his) / max(sum(los) / RANKS, 1) * (1 + 3 * SLACK_REL)
        check(lo_imb <= c["incl"]["imbalance"] <= hi_imb, "imbalance %.3f, expected %.3f..%.3f" %
              (c["incl"]["imbalance"], lo_imb, hi_imb))
        check(c["incl"]["max_process"] == per.index(max(per)), "max at process %s, per rank %s" %
              (c["incl"]["max_process"], per))
        # Rank 3 did the most by more than the sampling could blur.
        if los[RANKS - 1] * (1 - SLACK_REL) - SLACK_NS > max(his[:RANKS - 1]) * (1 + SLACK_REL) + SLACK_NS:
            check(c["incl"]["max_process"] == RANKS - 1, "max at process %s" % c["incl"]["max_process"])
        # The place that loses most to imbalance is work or inside it.
        imb, byid = doc["imbalance"]["processes"], {n["id"]: n for n in doc["nodes"]}
        chain, x = [], byid.get(imb[0]) if imb else None
        while x is not None:
            chain.append(x["id"])
            x = byid.get(x["parent"]) if x["parent"] is not None else None
        check(w["id"] in chain, "the first imbalance context %s is not in work" % imb[:1])
    t = subprocess.run([GPUTOOL, "report", out], capture_output=True, text=True)
    check(t.returncode == 0 and "processes    4 (ranks 0-3)" in t.stdout and "Load imbalance across processes" in t.stdout,
          "text report:\n" + t.stdout)
    # Each imbalance row: the max's samples (its CPU time over the 1 ms
    # period) and their noise, 1/sqrt(samples).
    rows = re.findall(r"^  \[\d+\]\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+([\d.]+) rank \d+\s+(\d+)\s+(\d+)% ", t.stdout, re.M)
    check(rows, "no samples and noise in the imbalance rows:\n" + t.stdout)
    for mx, samples, noise in rows:
        check(int(samples) == int(round(float(mx) * 1000)) and int(noise) == int(round(100 / int(samples) ** 0.5)),
              "max %s s: %s samples, noise %s%%" % (mx, samples, noise))
    print(t.stdout)

    # The MPI merge gives the same report.
    m = mpirun(2, [GPUTOOL, "report", out, "--format", "json"])
    check(m.returncode == 0 and json.loads(m.stdout or "null") == doc, "mpirun -np 2 gputool report differs: %s" %
          m.stderr[-2000:])

    # Wall-clock time, in a run of its own (not in a sanitizer build, where
    # the handler is slow): the ranks' waits at the end (a sleeping
    # barrier), longest on rank 0, which has the least work, shortest on
    # the last.
    waits = []
    if not SANITIZED:
        wall_out = os.path.join(tmp, "wall")
        q = mpirun(RANKS, [GPUTOOL, "run", "-o", wall_out, "--sample-hz", str(HZ), "--sample", "wall", "--",
                           APP, UNIT])
        r = subprocess.run([GPUTOOL, "report", wall_out, "--format", "json"], capture_output=True, text=True)
        if check(q.returncode == 0 and r.returncode == 0, "the wall-clock run: %s %s" % (q.stderr[-2000:], r.stderr)):
            wdoc = json.loads(r.stdout)
            byid = {n["id"]: n for n in wdoc["nodes"]}
            waits = [n for n in wdoc["nodes"] if n["name"] == "wait_for_all" and "WALLTIME" in n["metrics"] and
                     byid.get(n["parent"], {}).get("name") != "wait_for_all"]  # its lines, inlined into main
    if not SANITIZED and check(waits, "no WALLTIME at wait_for_all"):
        per = [sum(n["metrics"]["WALLTIME"]["per_process"][k] for n in waits) for k in range(RANKS)]
        print("wait_for_all wall-clock time per rank (ms): %s" % [round(v / 1e6, 1) for v in per])
        check(per[0] > per[-1] and all(per), "WALLTIME of the waits per rank %s" % per)

    # The page of this run: every tab on every metric in Chromium.
    h = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_html.py"),
                        GPUTOOL, "--run", out], capture_output=True, text=True, timeout=600)
    check(h.returncode in (0, 77), "the HTML page of the MPI run: %s" % (h.stdout + h.stderr)[-1500:])
    print(h.stdout.strip())

    # Without -o, every rank picks the same directory (the job's id). Each
    # rank writes it to a file of its own: mpirun may splice the ranks'
    # stdout mid-line.
    d = subprocess.run(MPIRUN + ["-np", "2", GPUTOOL, "run", "--", "sh", "-c",
                                 'printf %s "$GPUTOOL_OUTPUT" > "outdir.$OMPI_COMM_WORLD_RANK"'],
                       capture_output=True, text=True, env=env(), cwd=tmp, timeout=300)
    dirs = set()
    for r in range(2):
        f = os.path.join(tmp, "outdir.%d" % r)
        if os.path.exists(f):
            with open(f) as fh:
                dirs.add(fh.read())
    check(d.returncode == 0 and len(dirs) == 1 and os.path.isdir(os.path.join(tmp, dirs.pop())),
          "ranks disagree on the default directory: %s" % d.stderr[-2000:])

    # Exit status through gputool run and mpirun; a signal too.
    e = mpirun(2, [GPUTOOL, "run", "-o", os.path.join(tmp, "exit"), "--", APP, "1000", "--exit", "3"])
    check(e.returncode == 3, "--exit 3 under mpirun came back as %d" % e.returncode)
    e = mpirun(2, [GPUTOOL, "run", "-o", os.path.join(tmp, "sig"), "--", APP, "1000", "--signal"])
    check(e.returncode != 0, "a rank killed by SIGTERM came back as %d" % e.returncode)
    # The rank that SIGTERM ended wrote its profile, and so did the one
    # mpirun then ended: no rank is missing.
    profs = [f for f in os.listdir(os.path.join(tmp, "sig")) if f.endswith(".gtprof")]
    check(len(profs) == 2, "after SIGTERM: profiles %s" % profs)
    r = subprocess.run([GPUTOOL, "report", os.path.join(tmp, "sig")], capture_output=True, text=True)
    check(r.returncode == 0 and "missing" not in r.stdout, "report after SIGTERM: %s" % r.stdout[:2000])
    # SIGKILL leaves no profile: the report names the rank.
    e = mpirun(2, [GPUTOOL, "run", "-o", os.path.join(tmp, "kill"), "--", APP, "1000", "--kill"])
    check(e.returncode != 0, "a rank killed by SIGKILL came back as %d" % e.returncode)
    r = subprocess.run([GPUTOOL, "report", os.path.join(tmp, "kill")], capture_output=True, text=True)
    check(r.returncode == 0 and "1 of 2 ranks wrote no profile here: 1\n" in r.stdout,
          "report after SIGKILL: %s" % r.stdout[:2000])
    e = mpirun(1, [GPUTOOL, "run", "-o", os.path.join(tmp, "one"), "--", APP, "1000", "--exit", "5"])
    check(e.returncode == 5, "--exit 5 with one rank came back as %d" % e.returncode)

    if failures:
        print("test_mpi: %d failures (files in %s)" % (len(failures), tmp))
        sys.exit(1)
    shutil.rmtree(tmp)
    print("test_mpi: ok")


main()
