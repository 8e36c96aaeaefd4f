#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs one OpenMP benchmark under several configurations -- no tool, the
null OMPT tool, builds of gputool, gputool with variables set -- in
interleaved rounds, and prints per measurement each configuration's median
and the median of its per-round ratios to the configuration named "null",
with the middle half of those ratios (their quartiles) in brackets.

  config-ratios.py [--rounds N] [--threads T] [--timeout S] PROGRAM "ARGS" NAME=LIB[,VAR=VALUE...]...

LIB is a tool library for OMP_TOOL_LIBRARIES, or "-" for none; one
configuration must be named "null" (the null tool: the baseline of the
ratios). Each round runs every configuration once, in the order given.

The measurements are the lines the program prints:
  EPCC's            "<TEST> time = <X> microseconds" (its reference lines left out)
  bench/omp-dense's "result <NAME> <X> ..."

Example (dense at 16 threads: the library against itself without samples):
  bench/omp/config-ratios.py --rounds 16 --threads 16 build/bench/omp-dense/dense "" \\
      none=- null=build/bench/omp/libgtnulltool.so gputool=build/libgputool.so \\
      nosamples=build/libgputool.so,GPUTOOL_SAMPLE_HZ=0
"""
import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlines import measure  # noqa: E402



def config(spec):
    name, _, rest = spec.partition("=")
    parts = rest.split(",")
    if not name or not parts[0]:
        raise argparse.ArgumentTypeError("expected NAME=LIB[,VAR=VALUE...]: %s" % spec)
    lib = None if parts[0] == "-" else os.path.abspath(parts[0])
    return name, lib, dict(v.split("=", 1) for v in parts[1:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--threads", default=str(os.cpu_count()))
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("program")
    ap.add_argument("args")
    ap.add_argument("configs", nargs="+", type=config)
    a = ap.parse_args()
    if "null" not in [c[0] for c in a.configs]:
        ap.error("one configuration must be named null")
    out_dir = tempfile.mkdtemp(prefix="gputool-config-ratios-")
    res, hangs = {}, 0
    for r in range(a.rounds):
        for name, lib, var in a.configs:
            env = dict(os.environ, OMP_NUM_THREADS=a.threads, GPUTOOL_OUTPUT=out_dir)
            env.pop("OMP_TOOL_LIBRARIES", None)
            if lib:
                env["OMP_TOOL_LIBRARIES"] = lib
            env.update(var)
            got = measure(a.program, a.args.split(), env, a.timeout)
            if got is None:
                print("HANG %s in round %d" % (name, r + 1), flush=True)
                hangs += 1
                continue
            for test, v in got.items():
                res.setdefault(test, {}).setdefault(name, {})[r] = v
    print("%s %s, %s threads, %d rounds: median / median ratio to null [middle half]" %
          (os.path.basename(a.program), a.args, a.threads, a.rounds))
    for test, by in res.items():
        base = by.get("null", {})
        row = "%-24s" % test[:24]
        for name, _, _ in a.configs:
            x = by.get(name, {})
            rs = sorted(x[k] / base[k] for k in x if base.get(k))
            if not rs:
                row += "  %s=-" % name
                continue
            q = statistics.quantiles(rs, n=4) if len(rs) >= 4 else [rs[0], 0, rs[-1]]
            row += "  %s=%.4g/%.3f [%.2f-%.2f]" % (name, statistics.median(x.values()), statistics.median(rs),
                                                   q[0], q[2])
        print(row, flush=True)
    return 1 if hangs else 0


if __name__ == "__main__":
    sys.exit(main())
