# SPDX-License-Identifier: MIT
"""What the PC samples say of samples/cuda/advice's slow kernels, each of a
pair whose fix is known: the stall reason with the most samples and the
line with the most of it must be the inefficiency's, the instruction
blamer must name local memory for the spilling kernel, and the occupancy
of the kernel that reserves shared memory must show its limit. Prints the
speedups the program measured for each fix, beside the samples' shares.

Usage: check_advice.py GPUTOOL OUTDIR PROGRAM_OUTPUT SOURCE"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from gtrun import check, main, profiles  # noqa: E402

GPUTOOL, OUTDIR, STDOUT, SRC = sys.argv[1:5]


def marked(tag):
    got = [i + 1 for i, line in enumerate(open(SRC)) if re.search(r"// %s\b" % tag, line)]
    check(len(got) == 1, "one line marked %s in %s: %s" % (tag, SRC, got))
    return "advice.cu:%d" % got[0]


def test_advice():
    p = profiles(GPUTOOL, OUTDIR)[0]
    speedup = {m.group(1): float(m.group(2)) for m in
               re.finditer(r"^pair (\w+) .* speedup ([\d.]+)", open(STDOUT).read(), re.M)}
    check(len(speedup) == 5, "the program's five pairs: %s" % speedup)
    reasons = [m["name"] for m in p.doc["metrics"] if m["name"].startswith("GPS_")]

    kernels = {}
    for ph in p.find("<gpu kernel>"):
        for k in p.children.get(ph["id"], []):
            kernels.setdefault((k.get("name") or "").split("(")[0], []).append(k)

    def top(name):
        """The kernel's samples, its top stall reason, that reason's share
        and the line holding the most of it."""
        ks = kernels.get(name, [])
        check(ks, "no kernel %s with samples" % name)
        s = sum(p.incl(k, "GPC_SAMPLES") for k in ks)
        r = max(reasons, key=lambda m: sum(p.incl(k, m) for k in ks))
        lines = {}
        for k in ks:
            for n in p.descendants(k):
                if p.excl(n, r):
                    lines[n.get("name")] = lines.get(n.get("name"), 0) + p.excl(n, r)
        line = max(lines, key=lines.get) if lines else None
        return ks, s, r, sum(p.incl(k, r) for k in ks) / s, line

    rows = []
    # The barrier's samples come at the line of the loop that holds it.
    for pair, kernel, want_reasons, tags in (("coalesce", "copy_strided", ("GPS_LONG_SCOREBOARD",), ("STRIDED",)),
                                             ("spill", "sums_local", ("GPS_LG_THROTTLE", "GPS_LONG_SCOREBOARD"),
                                              ("LOCAL",)),
                                             ("balance", "barrier_skewed", ("GPS_BARRIER",), ("BARRIER", "STEPS")),
                                             ("occupancy", "chain_reserved", ("GPS_WAIT",), ("RESERVED",))):
        ks, s, r, share, line = top(kernel)
        print("  %-10s fix measured %6.2fx; %-14s %d samples, %.1f%% %s, most at %s" %
              (pair, speedup.get(pair, 0), kernel, s, 100 * share, r, line))
        rows.append((kernel, r, want_reasons, line, [marked(t) for t in tags]))
        if pair == "spill":
            local = sum(p.incl(k, "GPB_LOCAL") for k in ks) / s
            print("  %-10s the blamer: %.1f%% of its samples wait for local memory" % ("", 100 * local))
            check(local > 0.25, "sums_local: %.3f of its samples blamed on local memory" % local)
        if pair == "occupancy":
            occ = sum(p.incl(k, "GKER_OCC_THR") for k in ks) / max(1, sum(p.incl(k, "GKER_COUNT") for k in ks))
            print("  %-10s theoretical occupancy %.1f%%" % ("", occ / 10))
            check(occ < 250, "chain_reserved: occupancy %.1f%%, limited by its shared memory" % (occ / 10))
    ks, s, r, share, line = top("math_precise")
    print("  %-10s fix measured %6.2fx; %-14s %d samples, %.1f%% %s, most at %s (not told apart from the fix)" %
          ("fastmath", speedup.get("fastmath", 0), "math_precise", s, 100 * share, r, line))
    for kernel, r, want, line, want_lines in rows:
        check(r in want and line in want_lines, "%s: top reason %s at %s, expected %s at %s" %
              (kernel, r, line, "/".join(want), " or ".join(want_lines)))


main([("advice pairs: the samples name each inefficiency at its line", test_advice)])
