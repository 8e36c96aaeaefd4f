#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Overhead of gputool on OpenMP target regions (host offload by default):
runs bench/omp-target/empty with no tool, with the null OMPT tool (the same
host and target callbacks as gputool, empty bodies) and with gputool, in
interleaved rounds, and prints the median microseconds per region of each
and gputool's ratio to the others. Budget: gputool <= 1.2x no tool on empty
regions (printed as PASS/OVER; the exit status does not depend on it).

Usage: run-target.py EMPTY_EXE LIBGTNULLTOOL LIBGPUTOOL [ROUNDS [REGIONS]]
The benchmark runs with LD_LIBRARY_PATH and LD_PRELOAD taken from
GT_RUN_LD_LIBRARY_PATH and GT_RUN_LD_PRELOAD when they are set (an LLVM
runtime carried to a GPU machine, docs/GPU-VALIDATION.md). On a GPU, with
GT_CUPTI_ONLY naming bench/cuda's libgtcuptionly.so, two more baselines
run: CUPTI alone with gputool's callbacks and activity kinds
(CUDA_INJECTION64_PATH), and the null tool with it, which together are
what gputool's measurement rests on."""
import os
import statistics
import subprocess
import sys
import tempfile

BUDGET = 1.2


def run(exe, regions, tool, cupti=None):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GPUTOOL_") and k not in ("OMP_TOOL_LIBRARIES", "CUDA_INJECTION64_PATH")}
    if cupti:
        env["CUDA_INJECTION64_PATH"] = cupti
    for k in ("LD_LIBRARY_PATH", "LD_PRELOAD"):
        if os.environ.get("GT_RUN_" + k):
            env[k] = os.environ["GT_RUN_" + k]
    if tool:
        env["OMP_TOOL_LIBRARIES"] = tool
        env["GPUTOOL_OUTPUT"] = tempfile.mkdtemp(prefix="gputool-bench-")
    out = subprocess.run([exe, str(regions), "5"], env=env, capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[0]: float(line.split()[1]) for line in out.splitlines() if line.strip()}


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    exe, null, lib = (os.path.abspath(a) for a in sys.argv[1:4])
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 7
    regions = int(sys.argv[5]) if len(sys.argv) > 5 else 20000
    cupti = os.environ.get("GT_CUPTI_ONLY")
    configs = [("no tool", None, None), ("null tool", null, None), ("gputool", lib, None)]
    if cupti:
        configs += [("CUPTI only", None, cupti), ("null+CUPTI", null, cupti)]
    got = {name: {"empty": [], "mapped": []} for name, _, _ in configs}
    for _ in range(rounds):
        for name, tool, cup in configs:
            for k, v in run(exe, regions, tool, cup).items():
                got[name][k].append(v)
    med = {name: {k: statistics.median(v) for k, v in d.items()} for name, d in got.items()}
    print("us per target region, median of %d rounds (each the best of 5 x %d regions)"
          % (rounds, regions))
    print("%-10s %10s %10s %10s %14s %14s" % ("region", "no tool", "null tool", "gputool",
                                              "gputool/none", "gputool/null"))
    for k in ("empty", "mapped"):
        n, z, g = med["no tool"][k], med["null tool"][k], med["gputool"][k]
        print("%-10s %10.3f %10.3f %10.3f %13.2fx %13.2fx" % (k, n, z, g, g / n, g / z))
    if cupti:
        print("%-10s %10s %10s %14s %14s" % ("region", "CUPTI only", "null+CUPTI", "gputool/CUPTI",
                                              "gputool/null+C"))
        for k in ("empty", "mapped"):
            c, zc, g = med["CUPTI only"][k], med["null+CUPTI"][k], med["gputool"][k]
            print("%-10s %10.3f %10.3f %13.2fx %13.2fx" % (k, c, zc, g / c, g / zc))
    ratio = med["gputool"]["empty"] / med["no tool"]["empty"]
    print("budget: gputool <= %.1fx no tool on empty regions: %s (%.2fx)"
          % (BUDGET, "PASS" if ratio <= BUDGET else "OVER", ratio))
    return 0


if __name__ == "__main__":
    sys.exit(main())
