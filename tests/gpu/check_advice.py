# SPDX-License-Identifier: MIT
"""What the PC samples say of samples/cuda/advice's slow kernels, each of a
pair whose fix is known: the stall reason with the most samples and the
line with the most of it must be the inefficiency's, the instruction
blamer must name local memory for the spilling kernel, and the occupancy
of the kernel that reserves shared memory must show its limit. Prints the
speedups the program measured for each fix, beside the samples' shares.

Then the report's "what to do next" list: each pair's slow side must get
the advice of its kind at its line (the fast side none of that kind), and
the table of estimated against measured speedups is printed; the pairs in
ESTIMATED must come within 25 %. Last, the pinned pair's repeated uploads
of unchanged buffers: counted, and advised at the copy.

Usage: check_advice.py GPUTOOL OUTDIR PROGRAM_OUTPUT SOURCE"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from gtrun import check, main, marked_line, pair_speedups, profiles  # noqa: E402

GPUTOOL, OUTDIR, STDOUT, SRC = sys.argv[1:5]


def marked(tag):
    return marked_line(SRC, tag)


def test_advice():
    p = profiles(GPUTOOL, OUTDIR)[0]
    speedup = pair_speedups(STDOUT)
    check(len(speedup) == 8, "the program's eight pairs: %s" % speedup)
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
    print("  %-10s fix measured %6.2fx; %-14s %d samples, %.1f%% %s, most at %s" %
          ("fastmath", speedup.get("fastmath", 0), "math_precise", s, 100 * share, r, line))
    for kernel, r, want, line, want_lines in rows:
        check(r in want and line in want_lines, "%s: top reason %s at %s, expected %s at %s" %
              (kernel, r, line, "/".join(want), " or ".join(want_lines)))


# Pair: (slow side, fast side (kernel names or the copy's line tag), the
# advice's kind, the tags of the lines it may name (None: a kernel-wide one)).
PAIRS = (("coalesce", "copy_strided", "copy_plain", "gpu-global-memory", ("STRIDED",)),
         ("spill", "sums_local", "sums_registers", "gpu-local-memory", ("LOCAL",)),
         ("registers", "rotate<8>", "rotate<1>", "gpu-local-memory", ("SPILLED",)),
         ("balance", "barrier_skewed", "barrier_even", "gpu-barrier", ("BARRIER", "STEPS")),
         ("occupancy", "chain_reserved", "chain_open", "gpu-occupancy", None),
         ("pinned", "PAGEABLE", None, "pageable-copies", None),
         ("fastmath", "math_precise", "math_fast", "gpu-math", ("PRECISE",)))
# The pairs whose estimate must come within 25 % of the measured speedup.
ESTIMATED = ("coalesce", "registers", "balance", "occupancy", "pinned", "fastmath")
# Changes that do not pay here, which the advice must not suggest: the
# pair's name, the kernel, the advice's kind.
NEGATIVE = (("occupancy_regs", "chain_kept<1>", "gpu-occupancy"),)


def test_next():
    p = profiles(GPUTOOL, OUTDIR)[0]
    speedup = pair_speedups(STDOUT)
    advice = p.doc.get("advice", [])
    check(advice, "the report has advice")

    def about(a, side):
        if side.isupper():  # a copy, by its call site's line
            return ("advice.cu:%s)" % marked(side).split(":")[1]) in a.get("at", "")
        return re.search(r"\b%s\(" % re.escape(side), a["name"]) is not None

    print("  %-14s %-14s %-18s %9s %9s %7s  %s" % ("pair", "slow side", "advice", "measured", "estimate", "error",
                                                  "at"))
    bad = []
    for pair, slow, fast, kind, tags in PAIRS:
        got = [a for a in advice if a["kind"] == kind and about(a, slow)]
        check(len(got) == 1, "%s: one piece of %s advice for %s, got %d" % (pair, kind, slow, len(got)))
        a = got[0]
        if tags:
            check(a.get("line") in [marked(t) for t in tags],
                  "%s: %s advice at %s, expected %s" % (pair, kind, a.get("line"), " or ".join(marked(t) for t in tags)))
        if fast:
            check(not [x for x in advice if x["kind"] == kind and about(x, fast)],
                  "%s: no %s advice for %s" % (pair, kind, fast))
        est, meas = a["speedup"], speedup.get(pair, 0)
        err = est / meas - 1 if meas and est else float("nan")
        print("  %-14s %-14s %-18s %8.2fx %8.2fx %+6.1f%%  %s" % (pair, slow, kind, meas, est, 100 * err,
                                                                a.get("line") or a.get("at", "")[:40]))
        if pair in ESTIMATED and not abs(err) <= 0.25:
            bad.append("%s: estimated %.2fx against %.2fx measured" % (pair, est, meas))
    for pair, kernel, kind in NEGATIVE:
        got = [a for a in advice if a["kind"] == kind and about(a, kernel)]
        print("  %-14s %-14s %-18s %8.2fx %9s" % (pair, kernel, "(none)" if not got else kind,
                                                 speedup.get(pair, 0), "-" if not got else "%.2fx" % got[0]["speedup"]))
        if got:
            bad.append("%s: %s advised for %s, whose fix measured %.2fx" % (pair, kind, kernel, speedup.get(pair, 0)))
    check(not bad, "; ".join(bad))


def test_resent():
    """The pinned pair uploads the same 64 MiB ROUNDS (5) times from each
    buffer: the uploads after each buffer's first send the same bytes
    again, and the pageable side's copies get that advice at their line."""
    p = profiles(GPUTOOL, OUTDIR)[0]
    mib64, rounds = 64 << 20, 5
    count = sum(p.excl(n, "GXCOPY_RESENT_COUNT") for n in p.doc["nodes"])
    sent = sum(p.excl(n, "GXCOPY_RESENT_BYTES") for n in p.doc["nodes"])
    print("  resent uploads %d, %d bytes" % (count, sent))
    check(count == 2 * (rounds - 1) and sent == 2 * (rounds - 1) * mib64,
          "resent uploads %d (%d bytes), expected %d" % (count, sent, 2 * (rounds - 1)))
    line = marked("PAGEABLE")
    got = [a for a in p.doc.get("advice", []) if a["kind"] == "resent-data" and (line + ")") in a.get("at", "")]
    check(len(got) == 1, "one resent-data advice at %s: %s" % (line, [a.get("at") for a in p.doc.get("advice", [])]))
    print("  resent-data at %s: saves %.3f ms (%s)" % (line, got[0]["saved_ns"] / 1e6, got[0]["why"]))


main([("advice pairs: the samples name each inefficiency at its line", test_advice),
      ("what to do next: each pair's advice, its estimate against the measured speedup", test_next),
      ("the same bytes uploaded again: counted, and advised at the copy", test_resent)])
