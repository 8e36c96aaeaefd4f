# SPDX-License-Identifier: MIT
"""The report's GPU sections on a replayed PC-sampling recording: the
recording of samples/cuda/gpucalls goes through the backend's real code
(test_cupti replay-pc) into a profile, and `gputool report` must show what
the samples hold: every kernel's stall reasons adding up to their classes,
its issued instructions by class adding up to its issued samples, the GPU
calling context of work()'s hottest line, its loop, and a stall tree whose
shares are the metrics'.

Usage: check_report_pc.py TEST_CUPTI GPUTOOL RECORDING SOURCE OUTDIR"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pcreport import check, finish, incl, inline_model, replay_report  # noqa: E402

TEST_CUPTI, GPUTOOL, REC, SRC, OUT = sys.argv[1:6]
doc, text = replay_report(TEST_CUPTI, GPUTOOL, ["replay-pc", REC, SRC], OUT, "gpucalls")
nodes = {n["id"]: n for n in doc["nodes"]}
names = [m["name"] for m in doc["metrics"]]
reasons = [m for m in names if m.startswith("GPS_")]
kernels = [n for n in doc["nodes"] if n.get("parent") is not None and
           nodes[n["parent"]].get("name") == "<gpu kernel>" and incl(n, "GPC_SAMPLES")]
check(len(kernels) == 3, "three kernels with samples (%d)" % len(kernels))
for k in kernels:
    stalls = sum(incl(k, c) for c in ("GPC_MEMORY", "GPC_EXEC", "GPC_CONTROL", "GPC_SYNC", "GPC_OTHER"))
    check(sum(incl(k, r) for r in reasons) == stalls,
          "%s: stall reasons add up to the stall classes (%d)" % (k["name"][:24], stalls))
    waits = sum(incl(k, m) for m in ("GPS_LONG_SCOREBOARD", "GPS_SHORT_SCOREBOARD", "GPS_WAIT"))
    check(sum(incl(k, m) for m in names if m.startswith("GPB_")) == waits,
          "%s: blamed stalls = dependency stalls (%d)" % (k["name"][:24], waits))
    gpi = sum(incl(k, m) for m in names if m.startswith("GPI_"))
    check(gpi == incl(k, "GPC_ISSUED"), "%s: issued by class = issued samples (%d)" % (k["name"][:24], gpi))

src = open(SRC).read().splitlines()
work = next(i + 1 for i, x in enumerate(src) if x.rstrip().endswith("// WORK"))
site_a = next(i + 1 for i, x in enumerate(src) if x.rstrip().endswith("// SITE_A"))
check("GPU loops (" in text and ("loop at gpucalls.cu:%d" % work) in text, "the loops section holds work()'s loop")
check(re.search(r"in loop at gpucalls\.cu:%d < \S+ < gpucalls\.cu:%d" % (work, site_a), text) is not None,
      "a line of work() in its loop, under its call at SITE_A")
check("GPU stall trees (" in text, "the stall trees section")
# The tree's shares are the metrics': two_sites' "exec" line.
ts = next(k for k in kernels if "two_sites" in k["name"])
want = "%5.1f%% exec" % (100.0 * incl(ts, "GPC_EXEC") / incl(ts, "GPC_SAMPLES"))
tree = text[text.index("GPU stall trees ("):]
block = tree[tree.index(ts["name"]):]
check(want in block.split("\n  _")[0], "two_sites' tree: '%s'" % want.strip())
check("waiting for a fixed-latency result (wait)" in block and "try: " in block, "a reason with its advice")
check("issued: fp32" in text, "issued instructions by class")
# The recursion's stack: waits for its local-memory loads, at a line of rec().
rec = next(k for k in kernels if "recursive" in k["name"])
local = [n for n in doc["nodes"] if n.get("metrics", {}).get("GPB_LOCAL")]
check(local and incl(rec, "GPB_LOCAL") > 0, "recursive: stalls caused by local memory (%d)" % incl(rec, "GPB_LOCAL"))
check("GPU stalls by their cause (" in text, "the blamer's section")
# Inlining: work() called at SITE_A waits in most of two_sites' samples; each
# estimate is the first model's at the line of the call, with f = (B +
# 3/4 (W - B)) / S for a call in a loop, (B + min(W - B, the kernel's
# issued samples)) / S elsewhere (W the function's waiting samples, B those
# waiting for a branch target), and c the call's own branches and moves
# (at its line, and in the function outside its loops) over the kernel's
# issued samples.
advice = doc.get("advice", [])
inl = [a for a in advice if a["kind"] == "gpu-inline"]
# rec() calls itself (RECURSE): the call's line holds "rec [recursive call]",
# and rec() gets no inlining advice, however long it waits.
recurse = next(i + 1 for i, x in enumerate(src) if x.rstrip().endswith("// RECURSE"))
marks = [n for n in doc["nodes"] if (n.get("name") or "").endswith(" [recursive call]")]
check(marks and all(nodes[n["parent"]].get("name") == "gpucalls.cu:%d" % recurse and "rec" in n["name"]
                    for n in marks), "the recursive call marked under its line (%d)" % len(marks))
check(not [a for a in inl if a["node"] == rec["id"]], "recursive: no inlining advice")
check([a for a in inl if a["node"] == ts["id"] and a.get("line") == "gpucalls.cu:%d" % site_a],
      "two_sites: inlining advised at SITE_A (%s)" % [(a["name"], a.get("line")) for a in inl])
for a in inl:
    k = nodes[a["node"]]
    want, w = inline_model(doc, a)
    check(a["samples"] in w and abs(a["speedup"] - want) <= 1e-6 * want,
          "%s: inlining %.4fx, the model's %.4fx" % (k["name"][:24], a["speedup"], want))
finish()
