# SPDX-License-Identifier: MIT
"""The code optimizers' advice on samples/cuda/optimize, run under PC
sampling: each pair's slow side must get the advice of its kind at the line
its source marks, the fast side none of that kind; the table of estimated
against measured speedups (the program's own timing of the runs the tool
measured) is printed.

Usage: check_optimize.py GPUTOOL OUTDIR PROGRAM_OUTPUT SOURCE"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from gtrun import check, main, marked_line, pair_speedups, profiles  # noqa: E402

GPUTOOL, OUTDIR, STDOUT, SRC = sys.argv[1:5]

# Pair: (slow kernel, fast kernel, the advice's kind, the tag of its line).
PAIRS = (("unroll", "sum_rolled", "sum_unrolled", "gpu-unroll", "ROLLED"),
         ("inline", "steps_called", "steps_inlined", "gpu-inline", "CALLED"),
         ("divide", "gather_mod64", "gather_mod32", "gpu-math", "MOD64"))


def marked(tag):
    return marked_line(SRC, tag)


def test_pairs():
    p = profiles(GPUTOOL, OUTDIR)[0]
    speedup = pair_speedups(STDOUT)
    check(len(speedup) == len(PAIRS), "the program's pairs: %s" % speedup)
    advice = p.doc.get("advice", [])

    def about(a, kernel):
        return re.search(r"\b%s\(" % re.escape(kernel), a["name"]) is not None

    print("  %-8s %-14s %-11s %9s %9s %7s  %s" % ("pair", "slow side", "advice", "measured", "estimate", "error", "at"))
    bad = []
    for pair, slow, fast, kind, tag in PAIRS:
        got = [a for a in advice if a["kind"] == kind and about(a, slow)]
        if len(got) != 1:
            bad.append("%s: %d pieces of %s advice for %s" % (pair, len(got), kind, slow))
            continue
        a = got[0]
        if a.get("line") != marked(tag):
            bad.append("%s: %s advice at %s, expected %s" % (pair, kind, a.get("line"), marked(tag)))
        if [x for x in advice if x["kind"] == kind and about(x, fast)]:
            bad.append("%s: %s advice for %s too" % (pair, kind, fast))
        est, meas = a["speedup"], speedup.get(pair, 0)
        err = est / meas - 1 if meas and est else float("nan")
        print("  %-8s %-14s %-11s %8.2fx %8.2fx %+6.1f%%  %s" % (pair, slow, kind, meas, est, 100 * err,
                                                               a.get("line")))
        print("           %s" % a["why"])
    check(not bad, "; ".join(bad))


main([("code optimizers: each pair's advice at its line, its estimate against the measured speedup", test_pairs)])
