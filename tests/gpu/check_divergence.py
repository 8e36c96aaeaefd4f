# SPDX-License-Identifier: MIT
"""samples/cuda/diverge under GPUTOOL_SASS_COUNTS: the instructions each
kernel executed, counted by warps and by threads (exact, from CUPTI's SASS
metrics), must give the kernel whose warps split at the lanes' lowest bit
a thread efficiency near 50 % and the one that splits by warps near
100 %; the first gets the divergence advice at one of its loops' lines,
the second none; the estimated speedup is compared with the speedup the
program measured without the tool (within 25 %). With Nsight Compute's
counts of the same program (NCU_CSV), the counts must agree exactly.

Usage: check_divergence.py GPUTOOL OUTDIR BARE_OUTPUT SOURCE [NCU_CSV]"""
import csv
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from gtrun import check, main, profiles  # noqa: E402

GPUTOOL, OUTDIR, BARE_OUT, SRC = sys.argv[1:5]
NCU = sys.argv[5] if len(sys.argv) > 5 else None


def marked(tag):
    return ["diverge.cu:%d" % (i + 1) for i, line in enumerate(open(SRC)) if re.search(r"// %s\b" % tag, line)]


def kernels(p):
    out = {}
    for ph in p.find("<gpu kernel>"):
        for k in p.children.get(ph["id"], []):
            name = (k.get("name") or "").split("(")[0]
            w, t = out.get(name, (0, 0))
            out[name] = (w + p.incl(k, "GSC_INST"), t + p.incl(k, "GSC_THREAD_INST"))
    return out


def test_counts():
    p = profiles(GPUTOOL, OUTDIR)[0]
    ks = kernels(p)
    print("  %s" % p.meta("sass_counts"))
    for name in ("branch_lanes", "branch_warps"):
        check(name in ks and ks[name][0] > 0, "%s: instructions counted (%s)" % (name, ks.get(name)))
        w, t = ks[name]
        print("  %-13s %d warp instructions, %d thread instructions: efficiency %.4f" % (name, w, t, t / 32.0 / w))
    eff = {n: ks[n][1] / 32.0 / ks[n][0] for n in ks}
    check(0.49 <= eff["branch_lanes"] <= 0.52, "branch_lanes: half its threads idle (%.4f)" % eff["branch_lanes"])
    check(eff["branch_warps"] >= 0.99, "branch_warps: whole warps (%.4f)" % eff["branch_warps"])
    if NCU:
        ncu = {}
        with open(NCU) as f:
            for r in csv.reader(line for line in f if line.startswith('"')):
                if len(r) < 15 or r[0] == "ID":
                    continue
                k = r[4].split("(")[0].strip()
                m = {"smsp__inst_executed.sum": 0, "smsp__thread_inst_executed.sum": 1}.get(r[12])
                if m is not None:
                    v = ncu.setdefault(k, [0, 0])
                    v[m] += int(r[14].replace(",", ""))
        for name, (w, t) in sorted(ks.items()):
            if name in ncu:
                print("  %-13s Nsight Compute: %d warp, %d thread instructions" % (name, ncu[name][0], ncu[name][1]))
                check(ncu[name] == [w, t], "%s: the counts are Nsight Compute's" % name)


def test_advice():
    p = profiles(GPUTOOL, OUTDIR)[0]
    m = re.search(r"^pair divergence slow_ms ([\d.]+) fast_ms ([\d.]+) speedup ([\d.]+)", open(BARE_OUT).read(), re.M)
    check(m, "the program's pair line")
    measured = float(m.group(3))
    advice = [a for a in p.doc.get("advice", []) if a["kind"] == "gpu-divergence"]
    lanes = [a for a in advice if a["name"].startswith("branch_lanes")]
    check(len(lanes) == 1, "one divergence advice for branch_lanes: %s" % [a["name"] for a in advice])
    check(not [a for a in advice if a["name"].startswith("branch_warps")], "none for branch_warps")
    a = lanes[0]
    check(a.get("line") in marked("DIVERGENT"), "at a loop's line: %s (%s)" % (a.get("line"), marked("DIVERGENT")))
    est = a["speedup"]
    print("  measured without the tool %.3f ms -> %.3f ms: %.2fx; estimated %.2fx (%+.1f %%)" %
          (float(m.group(1)), float(m.group(2)), measured, est, 100 * (est / measured - 1)))
    print("  why: %s" % a["why"])
    check(abs(est / measured - 1) <= 0.25, "estimated %.2fx against %.2fx measured" % (est, measured))


main([("instruction counts by warps and threads, per kernel", test_counts),
      ("divergence: the advice at its line, its estimate against the measured fix", test_advice)])
