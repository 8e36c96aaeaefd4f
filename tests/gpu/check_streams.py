# SPDX-License-Identifier: MIT
"""samples/cuda/streams under the tool: each of the 60 waits for stream 1
(wait_first) and for stream 2 (wait_second) is followed by a kernel on the
other stream, exactly (GSYNC_SERIAL_COUNT), and the serializing-sync advice
lists wait_first. The advice estimates no gain; the bound it states (the
time the next kernels could have run beside the waited ones) is printed
beside the time the program saved by feeding both streams first, in the
run the tool measured and without the tool.

Usage: check_streams.py GPUTOOL OUTDIR TOOL_OUTPUT BARE_OUTPUT"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from gtrun import check, main, profiles  # noqa: E402

GPUTOOL, OUTDIR, TOOL_OUT, BARE_OUT = sys.argv[1:5]
STEPS, ROUNDS = 20, 3


def measured(out):
    m = re.search(r"^pair overlap slow_ms ([\d.]+) fast_ms ([\d.]+) speedup ([\d.]+)", open(out).read(), re.M)
    check(m, "the program's pair line in %s" % out)
    return [float(x) for x in m.groups()]


def test_waits():
    p = profiles(GPUTOOL, OUTDIR)[0]
    waits = {}
    for n in p.find("<gpu sync>"):
        names = [x.get("name") or "" for x in p.path(n)]
        for w in ("wait_first", "wait_second"):
            if any(x.startswith(w) for x in names):
                waits[w] = n
    check(set(waits) == {"wait_first", "wait_second"}, "the two waits: %s" % list(waits))
    bound = 0
    for w, n in sorted(waits.items()):
        c, s = p.excl(n, "GSYNC_SERIAL_COUNT"), p.excl(n, "GSYNC_SERIAL")
        print("  %-11s %d waits, %d followed by a kernel on the other stream; bound %.3f ms" %
              (w, p.excl(n, "GSYNC_COUNT"), c, s / 1e6))
        check(c == STEPS * ROUNDS, "%s: every wait followed by the other stream's kernel (%d)" % (w, c))
        bound += s
    advice = [a for a in p.doc.get("advice", []) if a["kind"] == "serializing-sync"]
    check(any(a["node"] == waits["wait_first"]["id"] for a in advice),
          "serializing-sync at wait_first: %s" % [a.get("at") for a in advice])
    slow, fast, sp = measured(TOOL_OUT)
    bslow, bfast, bsp = measured(BARE_OUT)
    print("  bound %.3f ms in all; the program saved %.3f ms by feeding both first under the tool (%.2fx), "
          "%.3f ms without it (%.2fx)" % (bound / 1e6, (slow - fast) * ROUNDS, sp, (bslow - bfast) * ROUNDS, bsp))


main([("waits for one stream before feeding the other: counted, advised", test_waits)])
