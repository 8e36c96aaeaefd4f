#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""NVTX push/pop cost: no tool, the null NVTX tool, gputool, in the same run.
Usage: run.py PUSHPOP NULL_TOOL LIBGPUTOOL [PAIRS] [ROUNDS]

Each configuration runs ROUNDS times (default 5), interleaved, at two stack
depths; the best round of each is kept (the machine's noise only adds).
gputool samples as usual (its default rate) and writes its profile to a
scratch directory."""
import os
import re
import subprocess
import sys
import tempfile

exe, null, lib = (os.path.abspath(a) for a in sys.argv[1:4])
pairs = sys.argv[4] if len(sys.argv) > 4 else "200000"
rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 5
out = tempfile.mkdtemp(prefix="gputool-bench-nvtx-")


def once(env_add, depth):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GPUTOOL_") and k not in ("NVTX_INJECTION64_PATH", "LD_PRELOAD")}
    env.update(env_add)
    r = subprocess.run([exe, pairs, str(depth)], env=env, capture_output=True, text=True, check=True)
    return float(re.search(r"([\d.]+) ns per pair", r.stdout).group(1))


configs = [("no tool", {}), ("null tool", {"NVTX_INJECTION64_PATH": null}),
           ("gputool", {"NVTX_INJECTION64_PATH": lib, "GPUTOOL_OUTPUT": out, "GPUTOOL_FORCE": "1"})]
print("%d push/pop pairs at one call site; best of %d rounds; ns per pair" % (int(pairs), rounds))
print("%-8s %10s %10s %10s %14s" % ("depth", "no tool", "null tool", "gputool", "gputool/null"))
for depth in (8, 64):
    best = {}
    for _ in range(rounds):
        for name, env in configs:
            best[name] = min(best.get(name, float("inf")), once(env, depth))
    print("%-8d %10.1f %10.1f %10.1f %13.1fx" % (depth, best["no tool"], best["null tool"], best["gputool"],
                                                 best["gputool"] / best["null tool"]))
