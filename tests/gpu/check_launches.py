# SPDX-License-Identifier: MIT
"""samples/cuda/launches under the tool: the chain of tiny kernels launched
one by one must get the launch-bound advice at its launch line, the same
kernels launched as a graph none, and the estimated speedup of the chain
with its launches is compared with what the program measured of its fix,
in the run the tool measured (within 25 %) and without the tool (printed).

Usage: check_launches.py GPUTOOL OUTDIR TOOL_OUTPUT BARE_OUTPUT SOURCE"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from gtrun import check, main, profiles  # noqa: E402

GPUTOOL, OUTDIR, TOOL_OUT, BARE_OUT, SRC = sys.argv[1:6]


def marked(tag):
    got = [i + 1 for i, line in enumerate(open(SRC)) if re.search(r"// %s\b" % tag, line)]
    check(len(got) == 1, "one line marked %s in %s: %s" % (tag, SRC, got))
    return "launches.cu:%d" % got[0]


def measured(out):
    m = re.search(r"^pair graph slow_ms ([\d.]+) fast_ms ([\d.]+) speedup ([\d.]+) build_ms ([\d.]+)",
                  open(out).read(), re.M)
    check(m, "the program's pair line in %s" % out)
    return [float(x) for x in m.groups()]


def test_launch_bound():
    p = profiles(GPUTOOL, OUTDIR)[0]
    slow, fast, tool_speedup, build = measured(TOOL_OUT)
    bslow, bfast, bare_speedup, bbuild = measured(BARE_OUT)
    ks = [n for n in p.doc["nodes"] if (n.get("name") or "").startswith("link_axpy")]
    at = {}
    for k in ks:
        where = " < ".join(n.get("label") or n.get("name") or "" for n in p.path(k))
        at["loop" if marked("LAUNCH") in where else "graph" if marked("GRAPH") in where else where] = k
    check("loop" in at and "graph" in at, "the kernel under its two launch sites: %s" % list(at))
    for side in ("loop", "graph"):
        k = at[side]
        n, g, gn = p.incl(k, "GKER_COUNT"), p.incl(k, "GKER_LAUNCH_GAP"), p.incl(k, "GKER_LAUNCH_GAP_COUNT")
        print("  %-5s %d launches, kernel %.3f us each; %d found their stream idle, %.3f us each" %
              (side, n, p.incl(k, "GKER") / max(1, n) / 1e3, gn, g / max(1, gn) / 1e3))
    check(p.incl(at["graph"], "GKER_LAUNCH_GAP_COUNT") == 0, "a graph's kernels count no launch gap")
    advice = [a for a in p.doc.get("advice", []) if a["kind"] == "launch-bound"]
    check(len(advice) == 1 and advice[0]["node"] == at["loop"]["id"],
          "one launch-bound advice, at the chain launched one by one: %s" %
          [a.get("launched_at") for a in advice])
    a = advice[0]
    check(marked("LAUNCH") in a.get("launched_at", ""), "launched at the LAUNCH line: %s" % a.get("launched_at"))
    est = a["speedup"]
    print("  measured: %.2fx in this run (%.3f -> %.3f ms), %.2fx without the tool (%.3f -> %.3f ms);"
          " the graph's construction %.3f ms once" % (tool_speedup, slow, fast, bare_speedup, bslow, bfast, build))
    print("  estimated %.2fx: %+.1f %% against this run, %+.1f %% against the run without the tool; saves %.3f ms"
          % (est, 100 * (est / tool_speedup - 1), 100 * (est / bare_speedup - 1), a["saved_ns"] / 1e6))
    check(abs(est / tool_speedup - 1) <= 0.25, "estimated %.2fx against %.2fx measured" % (est, tool_speedup))


main([("launch-bound: the chain's advice, its estimate against the measured fix", test_launch_bound)])
