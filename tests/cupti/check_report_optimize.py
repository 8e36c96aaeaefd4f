# SPDX-License-Identifier: MIT
"""The code optimizers' advice on a replayed run of samples/cuda/optimize:
the recording (activity, PC samples and nvdisasm's text) goes through the
backend's real code (test_cupti replay-advice) into a profile, and `gputool
report` must give each pair's slow side the advice of its kind at the line
its source marks and the fast side none of it (the fast loop is unrolled 4
times already; the fast modulo has no division in its loop), with the
estimate docs/ADVICE.md's model gives from the profile's own metrics.

Usage: check_report_optimize.py TEST_CUPTI GPUTOOL RECORDING SOURCE OUTDIR"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pcreport import check, finish, inline_model, math_model, replay_report, unroll_model  # noqa: E402

TEST_CUPTI, GPUTOOL, REC, SRC, OUT = sys.argv[1:6]
# The run sampled at CUPTI's default period: 2^11 cycles.
doc, text = replay_report(TEST_CUPTI, GPUTOOL, ["replay-advice", REC, "11"], OUT, "optimize")
nodes = {n["id"]: n for n in doc["nodes"]}
advice = doc["advice"]


def marked(tag):
    got = [i + 1 for i, line in enumerate(open(SRC)) if re.search(r"// %s\b" % tag, line)]
    return "optimize.cu:%d" % got[0] if len(got) == 1 else None


MODELS = {"gpu-unroll": lambda a: unroll_model(doc, a)[0], "gpu-inline": lambda a: inline_model(doc, a)[0],
          "gpu-math": lambda a: math_model(doc, a)}
# (slow kernel, fast kernel, the advice's kind, the tag of its line); the
# replay keeps CUPTI's mangled names.
for slow, fast, kind, tag in (("sum_rolled", "sum_unrolled", "gpu-unroll", "ROLLED"),
                              ("steps_called", "steps_inlined", "gpu-inline", "CALLED"),
                              ("gather_mod64", "gather_mod32", "gpu-math", "MOD64")):
    got = [a for a in advice if a["kind"] == kind and slow in a["name"]]
    check(len(got) == 1 and got[0].get("line") == marked(tag),
          "%s: %s advice at %s (%s)" % (slow, kind, marked(tag), [a.get("line") for a in got]))
    check(not [a for a in advice if a["kind"] == kind and fast in a["name"]], "%s: no %s advice" % (fast, kind))
    for a in got:
        want = MODELS[kind](a)
        check(abs(a["speedup"] - want) <= 1e-6 * want, "%s: %.4fx, the model's %.4fx" % (slow, a["speedup"], want))
# Nothing else: the fast sides get no advice of any kind.
check(len(advice) == 3, "three pieces of advice (%s)" % [(a["kind"], a["name"][:20]) for a in advice])
finish()
