# SPDX-License-Identifier: MIT
"""The report's launch-bound advice on a replayed run of samples/cuda/launches:
the recording (activity, and when each operation was issued) goes through
the backend's real code and the monitor (test_cupti replay-profile) into a
profile. The chain launched one kernel at a time must get the advice at its
launch site in step(), with the speedup docs/ADVICE.md's model gives from the
profile's own metrics; the same kernels launched as a graph must get none,
and count no launch gap at all.

Usage: check_report_launches.py TEST_CUPTI GPUTOOL RECORDING SOURCE OUTDIR"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pcreport import check, finish, incl, replay_report  # noqa: E402
import advice_model  # noqa: E402  (on the path pcreport sets)

TEST_CUPTI, GPUTOOL, REC, SRC, OUT = sys.argv[1:6]
doc, text = replay_report(TEST_CUPTI, GPUTOOL, ["replay-profile", REC], OUT, "launches")
nodes = {n["id"]: n for n in doc["nodes"]}


def marked(tag):
    got = [i + 1 for i, line in enumerate(open(SRC)) if re.search(r"// %s\b" % tag, line)]
    check(len(got) == 1, "one line marked %s: %s" % (tag, got))
    return "launches.cu:%d" % got[0]


def path(n):
    out = []
    while n is not None:
        out.append(n.get("label") or n.get("name") or "")
        n = nodes.get(n.get("parent"))
    return " < ".join(out)


# The replay keeps CUPTI's (mangled) names, and a recording names a call
# site by its innermost frame: the launch's is the kernel's host stub,
# inlined into step() at the kernel's own line.
kernels = [n for n in doc["nodes"] if "link_axpy" in (n.get("name") or "")]
loop = [k for k in kernels if "step(" in path(k)]
graph = [k for k in kernels if marked("GRAPH") in path(k)]
check(len(loop) == 1 and len(graph) == 1, "the kernel under its two launch sites: %s" % [path(k) for k in kernels])
loop, graph = loop[0], graph[0]
n_loop, n_graph = incl(loop, "GKER_COUNT"), incl(graph, "GKER_COUNT")
gaps, gap_ns = incl(loop, "GKER_LAUNCH_GAP_COUNT"), incl(loop, "GKER_LAUNCH_GAP")
print("one by one: %d launches, %d found their stream idle, %.2f us each; graph: %d launches, %d gaps" %
      (n_loop, gaps, gap_ns / max(1, gaps) / 1e3, n_graph, incl(graph, "GKER_LAUNCH_GAP_COUNT")))
check(n_loop == n_graph and n_loop > 0, "as many kernels launched one by one (%d) as by the graph (%d)" %
      (n_loop, n_graph))
# Recorded on an H100: the kernel runs ~1 us, a launch costs several.
check(gaps >= 0.9 * n_loop, "most launches found their stream idle: %d of %d" % (gaps, n_loop))
check(incl(graph, "GKER_LAUNCH_GAP_COUNT") == 0 and incl(graph, "GKER_LAUNCH_GAP") == 0,
      "a graph's kernels count no launch gap")

advice = [a for a in doc.get("advice", []) if a["kind"] == "launch-bound"]
check(len(advice) == 1, "one launch-bound advice: %s" % [(a["kind"], a.get("launched_at")) for a in advice])
if advice:
    a = advice[0]
    check(a["node"] == loop["id"], "the advice is about the chain launched one by one: %s" % a.get("launched_at"))
    check("step(" in a.get("launched_at", ""), "launched in step(): %s" % a.get("launched_at"))
    busy = incl(loop, "GKER") * gaps / n_loop
    want = advice_model.launch_speedup(busy, gap_ns)
    check(abs(a["speedup"] - want) <= 1e-3 * want, "speedup %.4f, the model gives %.4f" % (a["speedup"], want))
    check(a["upper_bound"] and a["saved_ns"] == gap_ns, "saves the gaps, as an upper bound: %s" % a)
    print("advice: %.2fx, saves %.3f ms: %s" % (a["speedup"], a["saved_ns"] / 1e6, a["why"]))
check("launch" in text and "CUDA graph" in text, "the text report lists it")
finish()
