#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs one OpenMP program three ways -- no tool, the null OMPT tool and
gputool (OMP_TOOL_LIBRARIES) -- in interleaved rounds, and prints for each
way the medians of wall time, page faults (minor) and system time, with
their ratios to the no-tool runs. The program is the measured program only
if it makes the same page faults under the tool: that budget is checked.

  run-program.py [--rounds N] [--grep REGEX] LIBGPUTOOL_SO LIBNULLTOOL_SO -- PROGRAM ARGS...

--grep REGEX: a line of the program's output that must be the same in every
run (a checksum, LULESH's "Final Origin Energy"); a run whose line differs
fails the benchmark.

Budget (PASS/OVER; the exit status is 1 only when a run failed or its
checked line differed): page faults under gputool within 5 % of no tool.

Example (LULESH 2.0, built outside this repository):
  OMP_NUM_THREADS=2 bench/omp/run-program.py --grep "Final Origin Energy" \\
      build/libgputool.so build/bench/omp/libgtnulltool.so -- ./lulesh2.0 -s 30 -i 100
"""
import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def run_once(cmd, env):
    """Exit status, wall seconds, output; the caller reads the run's usage
    as the difference of RUSAGE_CHILDREN around it (runs are sequential)."""
    start = time.monotonic()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    return p.returncode, time.monotonic() - start, p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--grep")
    ap.add_argument("lib")
    ap.add_argument("null")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        ap.error("no program given")
    ways = [("no tool", None), ("null tool", os.path.abspath(a.null)),
            ("gputool", os.path.abspath(a.lib))]
    res = {w: {"wall": [], "minflt": [], "sys": []} for w, _ in ways}
    checked = None
    failed = 0
    for r in range(a.rounds):
        for w, lib in ways:
            env = dict(os.environ)
            for k in list(env):
                if k.startswith("GPUTOOL_") or k == "OMP_TOOL_LIBRARIES":
                    del env[k]
            out_dir = None
            if lib:
                env["OMP_TOOL_LIBRARIES"] = lib
                if w == "gputool":
                    out_dir = tempfile.mkdtemp(prefix="gt-bench-")
                    env["GPUTOOL_OUTPUT"] = out_dir
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            rc, wall, text = run_once(cmd, env)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if out_dir:
                shutil.rmtree(out_dir, ignore_errors=True)
            if rc != 0:
                print("round %d, %s: exit status %d" % (r + 1, w, rc))
                failed += 1
                continue
            if a.grep:
                m = re.search(a.grep + ".*", text)
                line = m.group(0).strip() if m else None
                if checked is None:
                    checked = line
                if line != checked or line is None:
                    print("round %d, %s: %r, not %r" % (r + 1, w, line, checked))
                    failed += 1
            res[w]["wall"].append(wall)
            res[w]["minflt"].append(after.ru_minflt - before.ru_minflt)
            res[w]["sys"].append(after.ru_stime - before.ru_stime)
    print("program: %s (%d rounds, OMP_NUM_THREADS=%s)" %
          (" ".join(cmd), a.rounds, os.environ.get("OMP_NUM_THREADS", "unset")))
    if checked:
        print("checked line, the same in every run: %s" % checked)
    base = {k: statistics.median(v) for k, v in res["no tool"].items() if v}
    print("%-10s %10s %8s %12s %8s %8s %8s" %
          ("", "wall s", "ratio", "minor faults", "ratio", "sys s", "ratio"))
    for w, _ in ways:
        m = {k: statistics.median(v) for k, v in res[w].items() if v}
        if not m:
            continue
        print("%-10s %10.3f %7.2fx %12d %7.3fx %8.3f %7.2fx" %
              (w, m["wall"], m["wall"] / base["wall"], m["minflt"],
               m["minflt"] / max(base["minflt"], 1), m["sys"],
               m["sys"] / base["sys"] if base["sys"] else 0))
    g = res["gputool"]["minflt"]
    if g and base.get("minflt"):
        ratio = statistics.median(g) / base["minflt"]
        print("budget: page faults under gputool within 5 %% of no tool: %.3fx %s" %
              (ratio, "PASS" if abs(ratio - 1) <= 0.05 else "OVER"))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
