#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""MPI calls as measured regions: samples/mpi/waits under `mpirun -np 4
gputool run`, checked against what each rank measured itself.

Usage: test_mpi_waits.py BUILD_DIR MPIRUN [MPIRUN FLAGS...]

Exact: each MPI call's context (<mpi MPI_Allreduce> under main) with its
count, bytes sent and received (a receive's from its status: 64 bytes into a
buffer of 256; an Irecv's at the Irecv, from its completion) and the summed
communicator sizes, per rank. From the ranks' own clocks: each rank's
MPI_IDLE at the allreduce (min(the last rank's enter - its own enter, its
call's length), over the rounds), at MPI_Recv and at MPI_Waitall (the late
sender: min(the sender's send enter - its own enter, its call's length));
MPI_IDLE_CAUSE of each rank, the waits of the others at the instances where
it entered last, on its work() (where its samples fell before the call).
Each within 5 % and a floor per call: the tool's clock is read a few
microseconds after the program's, later still when the wrapper is preempted
on a loaded machine (4 ranks on 2 cores)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runenv import check, clean_env, failures, sanitized  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
MPIRUN = sys.argv[2:]
SANITIZED = sanitized(BUILD)
GPUTOOL = os.path.join(BUILD, "gputool")
APP = os.path.join(BUILD, "samples", "mpi", "waits")
RANKS, ROUNDS, UNIT, LATE_MS = 4, 8, "10000000", 40
REL, FLOOR_NS = 0.05, 2000000  # per call


def own(err):
    """Each rank's line: {rank: {"cpu_ns": C, "allreduce": [(E, D)], "send": [S], ...}}."""
    out = {}
    for line in err.splitlines():
        if not line.startswith("waits: rank "):
            continue
        w = line.split()
        d = {"cpu_ns": int(w[4])}
        for i in range(5, len(w) - 1, 2):
            d[w[i]] = [tuple(int(x) for x in v.split(":")) if ":" in v else int(v) for v in w[i + 1].split(",")]
        out[int(w[2])] = d
    return out


def expected(m):
    """Per rank: MPI_IDLE at the allreduce, the Recv, the Waitall; the
    MPI_IDLE_CAUSE of the allreduce's waits and of its late sends; and the
    allreduce's waits whose blame may go either way: (lost, won) per rank,
    of the rounds where it entered last, or next to last, within FLOOR_NS
    of the other. The tool reads its clock after the program's, later when
    the wrapper is preempted, and may then see the other rank last."""
    idle = {k: {"Allreduce": 0, "Recv": 0, "Waitall": 0} for k in range(RANKS)}
    cause, late = [0] * RANKS, [0] * RANKS
    lost, won = [0] * RANKS, [0] * RANKS
    for i in range(ROUNDS):
        enters = [m[k]["allreduce"][i][0] for k in range(RANKS)]
        last = max(enters)
        culprit = enters.index(last)
        waits = 0
        for k in range(RANKS):
            w = min(last - enters[k], m[k]["allreduce"][i][1])
            idle[k]["Allreduce"] += w
            cause[culprit] += w
            waits += w
        second = max((k for k in range(RANKS) if k != culprit), key=lambda k: enters[k])
        if last - enters[second] < FLOOR_NS:
            lost[culprit] += waits
            won[second] += waits
        for k in range(RANKS):
            src = (k + RANKS - 1) % RANKS
            e, d = m[k]["recv"][i]
            w = min(max(0, m[src]["send"][i] - e), d)
            idle[k]["Recv"] += w
            late[src] += w
            e, d = m[k]["waitall"][i]
            w = min(max(0, m[src]["isend"][i] - e), d)
            idle[k]["Waitall"] += w
            late[src] += w
    return idle, cause, late, lost, won


def near(got, want, calls):
    return abs(got - want) <= REL * want + FLOOR_NS * calls


def near_either(got, want, lost, won, calls):
    """near(), where the blame of near ties (expected()) may have gone
    either way: want - lost to want + won."""
    tol = REL * want + FLOOR_NS * calls
    return want - lost - tol <= got <= want + won + tol


def per(n, metric):
    """The inclusive value of @metric at node @n per rank."""
    return n["metrics"].get(metric, {}).get("per_process", [0] * RANKS)


def fortran(tmp):
    """samples/mpi/ring (Fortran, mpif.h: Open MPI's Fortran library calls
    PMPI_ functions, so its symbols are wrapped too): exact counts and bytes
    of each call, under the Fortran main program."""
    ring = os.path.join(BUILD, "samples", "mpi", "ring")
    if not os.path.exists(ring):
        print("no Fortran sample: the Fortran bindings are not checked")
        return
    if SANITIZED:
        # gfortran's program has no sanitizer runtime for the library to use.
        print("a sanitizer build: the Fortran bindings are checked in the plain build")
        return
    out, n, rounds = os.path.join(tmp, "fortran"), 3, 5
    p = subprocess.run(MPIRUN + ["-np", str(n), GPUTOOL, "run", "-o", out, "--", ring], capture_output=True,
                       text=True, env=clean_env(), timeout=600)
    if not check(p.returncode == 0 and "ring: 3 ranks, sum   3.0" in p.stdout, "the Fortran run failed (%d): %s" %
                 (p.returncode, p.stderr[-3000:])):
        return
    r = subprocess.run([GPUTOOL, "report", out, "--format", "json"], capture_output=True, text=True)
    if not check(r.returncode == 0, "report of the Fortran run: %s" % r.stderr[-2000:]):
        return
    doc = json.loads(r.stdout)
    byid = {x["id"]: x for x in doc["nodes"]}
    calls = {x["name"]: x for x in doc["nodes"] if (x["name"] or "").startswith("<mpi ")}
    want = {"Init": (1, 0, 0), "Finalize": (1, 0, 0), "Barrier": (1, 0, 0),
            "Allreduce": (rounds, 8 * rounds, 8 * rounds), "Send": (rounds, 64 * rounds, 0),
            "Recv": (rounds, 0, 64 * rounds), "Isend": (rounds, 256 * rounds, 0),
            "Irecv": (rounds, 0, 256 * rounds), "Waitall": (rounds, 0, 0)}
    check(sorted(calls) == sorted("<mpi MPI_%s>" % k for k in want), "Fortran calls %s" % sorted(calls))
    for k, (count, sent, recv) in want.items():
        x = calls.get("<mpi MPI_%s>" % k)
        if not x:
            continue
        got = (per(x, "REGION_COUNT")[:n], per(x, "MPI_BYTES_SENT")[:n], per(x, "MPI_BYTES_RECV")[:n])
        check(got == ([count] * n, [sent] * n, [recv] * n), "Fortran %s: counts, sent, received %s" % (k, got))
        check(byid[x["parent"]]["name"] == "ring", "Fortran %s under %s" % (k, byid[x["parent"]]["name"]))


def main():
    tmp = tempfile.mkdtemp(prefix="gt-mpiw-")
    out = os.path.join(tmp, "run")
    p = subprocess.run(MPIRUN + ["-np", str(RANKS), GPUTOOL, "run", "-o", out, "--", APP, UNIT, str(ROUNDS),
                                 str(LATE_MS)], capture_output=True, text=True, env=clean_env(), timeout=600)
    if not check(p.returncode == 0 and "waits: 4 ranks, 8 rounds, sum 6.0" in p.stdout,
                 "the run failed (%d): %s" % (p.returncode, p.stderr[-3000:])):
        sys.exit(1)
    m = own(p.stderr)
    if not check(sorted(m) == list(range(RANKS)), "own lines of ranks %s" % sorted(m)):
        sys.exit(1)
    r = subprocess.run([GPUTOOL, "report", out, "--format", "json"], capture_output=True, text=True)
    if not check(r.returncode == 0, "report: %s" % r.stderr):
        sys.exit(1)
    doc = json.loads(r.stdout)
    byid = {n["id"]: n for n in doc["nodes"]}

    calls = {}
    for n in doc["nodes"]:
        if (n["name"] or "").startswith("<mpi "):
            check(n["name"] not in calls, "%s in two contexts" % n["name"])
            calls[n["name"]] = n
    # Each call where the program made it: directly under main.
    for name, n in calls.items():
        check(byid[n["parent"]]["name"] == "main", "%s under %s" % (name, byid[n["parent"]]["name"]))
    want = {  # name: (count, sent, received) per rank
        "Init": (1, 0, 0), "Finalize": (1, 0, 0),
        "Allreduce": (ROUNDS, 8 * ROUNDS, 8 * ROUNDS),
        "Send": (ROUNDS, 64 * ROUNDS, 0), "Recv": (ROUNDS, 0, 64 * ROUNDS),
        "Isend": (ROUNDS, 256 * ROUNDS, 0), "Irecv": (ROUNDS, 0, 256 * ROUNDS),
        "Waitall": (ROUNDS, 0, 0),
    }
    check(sorted(calls) == sorted("<mpi MPI_%s>" % k for k in want), "calls %s" % sorted(calls))
    for k, (count, sent, recv) in want.items():
        n = calls.get("<mpi MPI_%s>" % k)
        if not n:
            continue
        check(per(n, "REGION_COUNT") == [count] * RANKS, "%s: counts %s" % (k, per(n, "REGION_COUNT")))
        check(per(n, "MPI_BYTES_SENT") == [sent] * RANKS, "%s: sent %s" % (k, per(n, "MPI_BYTES_SENT")))
        check(per(n, "MPI_BYTES_RECV") == [recv] * RANKS, "%s: received %s" % (k, per(n, "MPI_BYTES_RECV")))
        ranks = [RANKS * count] * RANKS if k not in ("Init", "Finalize", "Waitall") else [0] * RANKS
        check(per(n, "MPI_COMM_RANKS") == ranks, "%s: ranks %s" % (k, per(n, "MPI_COMM_RANKS")))

    idle, cause, late, lost, won = expected(m)
    for k in ("Allreduce", "Recv", "Waitall"):
        got = per(calls.get("<mpi MPI_%s>" % k, {"metrics": {}}), "MPI_IDLE")
        print("MPI_IDLE at %-9s (ms) tool %s, the ranks' own %s" %
              (k, [round(v / 1e6, 2) for v in got], [round(idle[r][k] / 1e6, 2) for r in range(RANKS)]))
        for r in range(RANKS):
            check(near(got[r], idle[r][k], ROUNDS), "rank %d: MPI_IDLE at %s %.2f ms, measured %.2f ms" %
                  (r, k, got[r] / 1e6, idle[r][k] / 1e6))
    # The late sender's wait is long enough to tell.
    check(idle[1]["Recv"] > ROUNDS * LATE_MS * 1e6 * 0.9, "rank 1 waited %.1f ms at Recv" % (idle[1]["Recv"] / 1e6))

    # Blame: each rank's MPI_IDLE_CAUSE in all (the roots' inclusive
    # values): the waits at the allreduce it caused, charged to its work()
    # (the outermost work frames'), and the waits for its late sends, charged
    # where it did no work before them (at the sends: rank 0 sleeps).
    total = [sum(per(n, "MPI_IDLE_CAUSE")[r] for n in doc["nodes"] if n["parent"] is None) for r in range(RANKS)]
    in_work = [0] * RANKS
    for n in doc["nodes"]:
        if n["name"] != "work" or byid[n["parent"]]["name"] == "work":
            continue
        for r in range(RANKS):
            in_work[r] += per(n, "MPI_IDLE_CAUSE")[r]
    print("MPI_IDLE_CAUSE (ms) tool %s, in work() %s; from the ranks' own: of the allreduce %s, of late sends %s" %
          ([round(v / 1e6, 2) for v in total], [round(v / 1e6, 2) for v in in_work],
           [round(v / 1e6, 2) for v in cause], [round(v / 1e6, 2) for v in late]))
    print("the allreduce's waits of near ties (ms), the blame each rank may lose %s, may win %s" %
          ([round(v / 1e6, 2) for v in lost], [round(v / 1e6, 2) for v in won]))
    for r in range(RANKS):
        check(near_either(total[r], cause[r] + late[r], lost[r], won[r], RANKS * ROUNDS + 2 * ROUNDS),
              "rank %d: MPI_IDLE_CAUSE %.2f ms, measured %.2f ms" % (r, total[r] / 1e6, (cause[r] + late[r]) / 1e6))
        check(near_either(in_work[r], cause[r], lost[r], won[r], RANKS * ROUNDS),
              "rank %d: MPI_IDLE_CAUSE in work() %.2f ms of %.2f ms" % (r, in_work[r] / 1e6, cause[r] / 1e6))
    sends = sum(per(calls[k], "MPI_IDLE_CAUSE")[0] for k in ("<mpi MPI_Send>", "<mpi MPI_Isend>") if k in calls)
    check(late[0] > ROUNDS * LATE_MS * 1e6 and sends > 0.9 * late[0],
          "rank 0's late sends caused %.2f ms of waits, %.2f ms at its sends" % (late[0] / 1e6, sends / 1e6))

    # Samples inside the calls are the calls': none in MPI's own libraries
    # outside a call's region, and the waits' CPU time under the calls.
    def under_call(n):
        while n is not None:
            if (n["name"] or "").startswith("<mpi "):
                return True
            n = byid.get(n["parent"]) if n["parent"] is not None else None
        return False

    stray = [n["name"] for n in doc["nodes"] if "CPUTIME" in n["metrics"] and
             any(s in (n["name"] or "") for s in ("libmpi", "libopen-pal", "mca_", "libucp", "libucs")) and not under_call(n)]
    check(not stray, "samples in MPI libraries outside the calls: %s" % stray)
    in_calls = sum(sum(per(n, "CPUTIME")) for n in calls.values())
    check(in_calls > 0, "no CPU time inside the MPI calls")

    # The advice: the allreduce's imbalance, saving each rank the mean wait
    # there (the waits summed over ranks / the ranks), at the late ranks' work.
    ar = calls.get("<mpi MPI_Allreduce>")
    adv = [a for a in doc["advice"] if a["kind"] == "mpi-imbalance"]
    if check(ar is not None and len(adv) == 1, "mpi-imbalance advice: %s" % adv):
        waited = sum(per(ar, "MPI_IDLE"))
        a = adv[0]
        check(a["node"] == ar["id"] and abs(a["saved_ns"] - waited // RANKS) <= 1 and "late ranks worked at work" in
              a["why"], "mpi-imbalance: %s, expected %d ns saved" % (a, waited // RANKS))
    # The text report's MPI section: the call sites with their counts.
    t = subprocess.run([GPUTOOL, "report", out], capture_output=True, text=True)
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "samples", "mpi", "waits.c")
    with open(src) as f:
        line = 1 + [k for k, l in enumerate(f) if "MPI_Allreduce(&in" in l][0]
    rows = [l.split() for l in t.stdout.splitlines() if l.rstrip().endswith("(waits.c:%d)" % line) and "<mpi" in l]
    check(t.returncode == 0 and "\nMPI (calls in their contexts" in t.stdout and
          any(r[0] == str(RANKS * ROUNDS) for r in rows), "text report's MPI section:\n" + t.stdout[-3000:])

    fortran(tmp)
    if failures:
        print("test_mpi_waits: %d failures (files in %s)" % (len(failures), tmp))
        sys.exit(1)
    shutil.rmtree(tmp)
    print("test_mpi_waits: ok")


main()
