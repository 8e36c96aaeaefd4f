#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""MPI + OpenMP end to end: samples/mpi/imbalance, where rank r does r + 1
units of OpenMP work, run as `mpirun -np 4 gputool run -- imbalance`.

Usage: test_mpi.py BUILD_DIR MPIRUN [MPIRUN FLAGS...]

The merged report must show each rank's parallel regions (exactly 1, 2,
3, 4) and its CPU time in the work context in the ratio 1:2:3:4 (each rank
within 10 % of its share) and an imbalance (max/mean) of 1.6, within 10 %; every
rank writes its own files into the one directory; the application's exit
status comes back through gputool run and mpirun; `mpirun gputool report`
gives the same report as one process."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

BUILD = os.path.abspath(sys.argv[1])
MPIRUN = sys.argv[2:]
GPUTOOL = os.path.join(BUILD, "gputool")
APP = os.path.join(BUILD, "samples", "mpi", "imbalance")
RANKS = 4
UNIT = "200000000"  # iterations per unit of work: about 0.15 s of CPU
TOL = 0.10
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL " + msg)
    return cond


def env():
    e = {k: v for k, v in os.environ.items() if not k.startswith("GPUTOOL_") and k != "OMP_TOOL_LIBRARIES"}
    # Idle OpenMP threads and MPI ranks that wait give their CPU away.
    e.update(OMP_NUM_THREADS="2", KMP_BLOCKTIME="0")
    return e


def mpirun(n, args, timeout=600):
    return subprocess.run(MPIRUN + ["-np", str(n)] + args, capture_output=True, text=True, env=env(),
                          timeout=timeout)


def work_node(doc):
    """The work() call site under main."""
    byid = {n["id"]: n for n in doc["nodes"]}
    for n in doc["nodes"]:
        p = byid.get(n["parent"]) if n["parent"] is not None else None
        if n["name"] == "work" and n["kind"] == "frame" and p and p["name"] == "main":
            return n
    return None


def main():
    tmp = tempfile.mkdtemp(prefix="gt-mpi-")
    out = os.path.join(tmp, "run")
    p = mpirun(RANKS, [GPUTOOL, "run", "-o", out, "--sample-hz", "1000", "--", APP, UNIT])
    if not check(p.returncode == 0 and "imbalance: 4 ranks" in p.stdout, "the run failed (%d): %s" %
                 (p.returncode, p.stderr[-3000:])):
        sys.exit(1)
    profiles = sorted(f for f in os.listdir(out) if f.endswith(".gtprof"))
    ranks = sorted(int(f.split("-")[-2]) for f in profiles)
    check(ranks == list(range(RANKS)), "profiles %s: one per rank expected" % profiles)
    check(len(set(profiles)) == RANKS and len(os.listdir(out)) == 2 * RANKS, "files %s" % os.listdir(out))

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
        # Rank k's share of the work is (k + 1) / (1 + 2 + ... + RANKS).
        units = RANKS * (RANKS + 1) // 2
        for k in range(RANKS):
            want = sum(per) * (k + 1) / units
            check(abs(per[k] - want) <= TOL * want, "rank %d: %.1f ms, expected %.1f (+-%d%%)" %
                  (k, per[k] / 1e6, want / 1e6, TOL * 100))
        want = 2.0 * RANKS / (RANKS + 1)
        check(abs(c["incl"]["imbalance"] - want) <= TOL * want, "imbalance %.3f, expected %.2f" %
              (c["incl"]["imbalance"], want))
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
    print(t.stdout)

    # The MPI merge gives the same report.
    m = mpirun(2, [GPUTOOL, "report", out, "--format", "json"])
    check(m.returncode == 0 and json.loads(m.stdout or "null") == doc, "mpirun -np 2 gputool report differs: %s" %
          m.stderr[-2000:])

    # Without -o, every rank picks the same directory (the job's id).
    d = subprocess.run(MPIRUN + ["-np", "2", GPUTOOL, "run", "--", "env"], capture_output=True, text=True,
                       env=env(), cwd=tmp, timeout=300)
    dirs = {l.split("=", 1)[1] for l in d.stdout.splitlines() if l.startswith("GPUTOOL_OUTPUT=")}
    check(d.returncode == 0 and len(dirs) == 1 and os.path.isdir(os.path.join(tmp, dirs.pop())),
          "ranks disagree on the default directory: %s" % d.stdout)

    # Exit status through gputool run and mpirun; a signal too.
    e = mpirun(2, [GPUTOOL, "run", "-o", os.path.join(tmp, "exit"), "--", APP, "1000", "--exit", "3"])
    check(e.returncode == 3, "--exit 3 under mpirun came back as %d" % e.returncode)
    e = mpirun(2, [GPUTOOL, "run", "-o", os.path.join(tmp, "sig"), "--", APP, "1000", "--signal"])
    check(e.returncode != 0, "a rank killed by SIGTERM came back as %d" % e.returncode)
    e = mpirun(1, [GPUTOOL, "run", "-o", os.path.join(tmp, "one"), "--", APP, "1000", "--exit", "5"])
    check(e.returncode == 5, "--exit 5 with one rank came back as %d" % e.returncode)

    if failures:
        print("test_mpi: %d failures (files in %s)" % (len(failures), tmp))
        sys.exit(1)
    shutil.rmtree(tmp)
    print("test_mpi: ok")


main()
