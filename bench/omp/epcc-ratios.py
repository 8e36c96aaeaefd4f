#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""EPCC OpenMP microbenchmarks (built outside this tree) under no tool, the
null OMPT tool and gputool, in interleaved rounds: each test's time (the
benchmark's own "<TEST> time = ... microseconds"), the medians of the
per-round ratios to no tool and to the null tool, the middle half of
gputool's per-round ratios to the null tool (their quartiles: a median
near a budget on a noisy host is read with them), and the budgets against
the null tool as PASS/OVER.

  epcc-ratios.py [--rounds N] [--threads T] [--before LIB] [--also NAME=LIB[,VAR=VALUE...]]...
                 [--programs P,...] [--epcc-args ARGS] NULLTOOL LIBGPUTOOL EPCC_DIR

--before LIB runs another build of the library in the same rounds and
prints gputool's ratio to it. --also runs one more configuration in the
same rounds (a build of the library, or this one with variables set) and
prints its ratio to the null tool in a column NAME; it may be given
several times. --programs runs only those of syncbench, taskbench and
schedbench; --epcc-args passes ARGS (split at spaces) to each.

EPCC_DIR holds syncbench, schedbench and taskbench (EPCC 4.0, `make`).
schedbench runs its TASKLOOP tests only (--measureonly TASKLOOP).
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlines import measure  # noqa: E402

# Budgets against the null tool: every task test and TASKLOOP 1.30x; these
# fork/join tests 1.25x.
FORK_JOIN = {"PARALLEL": 1.25, "PARALLEL FOR": 1.25, "REDUCTION": 1.25}
TASKS = 1.30


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--before", help="another build of the library, run in the same rounds")
    ap.add_argument("--also", action="append", default=[], metavar="NAME=LIB[,VAR=VALUE...]",
                    help="one more configuration, run in the same rounds")
    ap.add_argument("--programs", default="syncbench,taskbench,schedbench")
    ap.add_argument("--epcc-args", default="")
    ap.add_argument("null")
    ap.add_argument("lib")
    ap.add_argument("epcc")
    a = ap.parse_args()
    extra = a.epcc_args.split()
    progs = [(p, args + extra) for p, args in (("syncbench", []), ("taskbench", []),
                                               ("schedbench", ["--measureonly", "TASKLOOP"]))
             if p in a.programs.split(",")]
    configs = [("none", None, {}), ("null", os.path.abspath(a.null), {}), ("gputool", os.path.abspath(a.lib), {})]
    if a.before:
        configs.append(("before", os.path.abspath(a.before), {}))
    also = []
    for spec in a.also:
        name, _, rest = spec.partition("=")
        parts = rest.split(",")
        if not name or not parts[0] or any("=" not in v for v in parts[1:]) or \
                name in [c[0] for c in configs]:
            ap.error("--also %s: not NAME=LIB[,VAR=VALUE...] with a name of its own" % spec)
        configs.append((name, os.path.abspath(parts[0]), dict(v.split("=", 1) for v in parts[1:])))
        also.append(name)
    res = {}  # (config, test) -> [times by round]
    hangs = 0
    for r in range(a.rounds):
        for prog, args in progs:
            for name, lib, variables in configs:
                env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), GPUTOOL_OUTPUT="/tmp/gputool-epcc-out")
                env.pop("OMP_TOOL_LIBRARIES", None)
                if lib:
                    env["OMP_TOOL_LIBRARIES"] = lib
                env.update(variables)
                t = measure(os.path.join(a.epcc, prog), args, env, a.timeout)
                if t is None:
                    hangs += 1
                    print("HANG %s %s round %d" % (prog, name, r + 1), flush=True)
                    continue
                for test, v in t.items():
                    res.setdefault((name, test), []).append((r, v))
        print("round %d done" % (r + 1), file=sys.stderr, flush=True)

    def ratios(cfg, base, test):
        x = dict(res.get((cfg, test), []))
        y = dict(res.get((base, test), []))
        return [x[k] / y[k] for k in x if k in y and y[k] > 0]

    def ratio(cfg, base, test):
        rs = ratios(cfg, base, test)
        return statistics.median(rs) if rs else None

    def spread(cfg, base, test):
        """The middle half of the per-round ratios: how far the median may
        move with the host's noise."""
        rs = ratios(cfg, base, test)
        if len(rs) < 4:
            return "n/a"
        q = statistics.quantiles(rs, n=4)
        return "%.2f-%.2f" % (q[0], q[2])

    tests = sorted({t for (_, t) in res}, key=lambda t: list(k[1] for k in res).index(t))
    print("%d threads, %d rounds; medians of per-round ratios" % (a.threads, a.rounds))
    print("%-28s %10s %8s %8s %10s %11s %10s  %-17s%s" % ("test", "none us", "null", "gputool", "vs null",
                                                      "(mid half)", "vs before" if a.before else "", "budget",
                                                      "".join("  %10s" % n for n in also)))
    over = 0
    for test in tests:
        none = res.get(("none", test))
        if not none:
            continue
        rn, rg, rgn = ratio("null", "none", test), ratio("gputool", "none", test), ratio("gputool", "null", test)
        budget = FORK_JOIN.get(test, TASKS if ("TASK" in test or "TASKLOOP" in test) else None)
        verdict = ""
        if budget and rgn is not None:
            ok = rgn <= budget
            over += not ok
            verdict = "%s (<= %.2fx)" % ("PASS" if ok else "OVER", budget)
        f = lambda v: "%.2fx" % v if v is not None else "n/a"
        rb = f(ratio("gputool", "before", test)) if a.before else ""
        cols = "".join("  %10s" % f(ratio(n, "null", test)) for n in also)
        print("%-28s %10.3f %8s %8s %10s %11s %10s  %-17s%s" % (test, statistics.median(v for _, v in none), f(rn),
                                                              f(rg), f(rgn), spread("gputool", "null", test), rb,
                                                              verdict, cols))
    print("hangs: %d; budgets over: %d" % (hangs, over))
    return 0


if __name__ == "__main__":
    sys.exit(main())
