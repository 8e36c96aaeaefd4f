# SPDX-License-Identifier: MIT
"""The report's "what to do next" on a replayed run of samples/cuda/advice:
the recording (activity, PC samples and nvdisasm's text) goes through the
backend's real code (test_cupti replay-advice) into a profile, and `gputool
report` must advise each pair's slow side at the line its source marks, the
fast side not of that kind, no occupancy change for the kernel whose fix
does not pay, and give each kernel the speedup docs/ADVICE.md's model gives
from the profile's own metrics (recomputed here).

Usage: check_report_advice.py TEST_CUPTI GPUTOOL RECORDING SOURCE OUTDIR"""
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pcreport import check, finish, incl, math_model, replay_report, unroll_model  # noqa: E402
import advice_model  # noqa: E402  (on the path pcreport sets)

TEST_CUPTI, GPUTOOL, REC, SRC, OUT = sys.argv[1:6]
# The run sampled at CUPTI's default period on the H100: 2^11 cycles.
doc, text = replay_report(TEST_CUPTI, GPUTOOL, ["replay-advice", REC, "11"], OUT, "advice")
nodes = {n["id"]: n for n in doc["nodes"]}
meta = doc["processes"][0]["meta"]
advice = doc["advice"]


def marked(tag):
    got = [i + 1 for i, line in enumerate(open(SRC)) if re.search(r"// %s\b" % tag, line)]
    return "advice.cu:%d" % got[0] if len(got) == 1 else None


# The replay keeps CUPTI's (mangled) names: templates as the mangling spells them.
MANGLED = {"rotate<8>": "rotateILi8E", "rotate<1>": "rotateILi1E", "chain_kept<1>": "chain_keptILi1E"}


def kernel(name):
    ks = [n for n in doc["nodes"] if n.get("parent") is not None and
          nodes[n["parent"]].get("name") == "<gpu kernel>" and
          (name in (n.get("name") or "") or MANGLED.get(name, "-") in (n.get("name") or ""))]
    return ks[0] if len(ks) == 1 else None


def first(key, default):
    v = meta.get(key)
    return float(v.split()[0].split(":")[-1]) if v else default


def model(a, k):
    """The kernel's T/T' by docs/ADVICE.md, from the profile's metrics."""
    S = incl(k, "GPC_SAMPLES")
    wr = (S - incl(k, "GPC_LATENCY")) / S
    iss = incl(k, "GPC_ISSUED")
    waiting = 1 - (iss + incl(k, "GPC_NOT_SELECTED")) / S
    il, ig = incl(k, "GPI_LOCAL"), incl(k, "GPI_GLOBAL")
    mem = (incl(k, "GPS_LONG_SCOREBOARD") + incl(k, "GPS_LG_THROTTLE")) / S
    count = incl(k, "GKER_COUNT") or 1
    occ = incl(k, "GKER_OCC_THR") / count

    def stall(f, cut):
        return advice_model.stall_ratio(wr, waiting, f, cut)

    if a["kind"] == "gpu-local-memory":
        f, cut = mem * il / (il + ig), il / iss
        n = occ / 1000 * first("gpu_warps_per_sm", 64) / first("pc_schedulers", 4)
        r = advice_model.gone_ratio(wr, waiting, f, cut, n)
    elif a["kind"] == "gpu-global-memory":
        r = stall(mem * ig / (il + ig), 0)
        t = incl(k, "GKER") / 1e9
        floor = ((S - incl(k, "GPC_LATENCY")) * first("pc_schedulers", 4) * first("pc_period_cycles", 0) *
                 ig / iss * 32 * 4 / first("gpu_dram_bytes_per_s", 1) / t)
        r = max(r, floor)
    elif a["kind"] == "gpu-barrier":
        g_sum, g_max = advice_model.serial_loads(doc["nodes"], k)
        r = advice_model.barrier_ratio(wr, waiting, incl(k, "GPS_BARRIER") / S, g_sum / S, g_max / S)
    else:
        lim = [incl(k, m) / count for m in ("GKER_OCC_SLOTS", "GKER_OCC_REGS", "GKER_OCC_SMEM")]
        tight = min(range(3), key=lambda i: (lim[i] <= 0, lim[i]))
        nxt = min([1000] + [x for i, x in enumerate(lim) if i != tight and x > 0])
        m = incl(k, "GPC_MEMORY") / S / waiting
        slots, sms, sched = first("gpu_warps_per_sm", 64), first("pc_sm_count", 0), first("pc_schedulers", 4)
        blocks, warps = incl(k, "GKER_BLKS") / count, math.ceil(incl(k, "GKER_BLK_THR") / count / 32)

        def per_sched(o):
            w = o / 1000 * slots
            if blocks > 0 and warps > 0 and sms > 0:
                w = min(w, math.ceil(blocks / sms) * warps)
            return w / sched
        r = advice_model.occupancy_ratio(m, 1 - waiting, per_sched(occ), per_sched(nxt))
    return 1 / r


check("What to do next (" in text, "the text report's section")
check(meta.get("gpu_dram_bytes_per_s") and meta.get("gpu_warps_per_sm"), "the devices' facts in the profile")
# The barrier's samples may come at the line of the loop that holds it.
for kind, slow, fast, tags in (("gpu-global-memory", "copy_strided", "copy_plain", ("STRIDED",)),
                               ("gpu-local-memory", "sums_local", "sums_registers", ("LOCAL",)),
                               ("gpu-local-memory", "rotate<8>", "rotate<1>", ("SPILLED",)),
                               ("gpu-barrier", "barrier_skewed", "barrier_even", ("BARRIER", "STEPS")),
                               ("gpu-occupancy", "chain_reserved", "chain_open", ())):
    k = kernel(slow)
    got = [a for a in advice if a["kind"] == kind and a["node"] == (k or {}).get("id")]
    check(k is not None and len(got) == 1, "%s: one piece of %s advice" % (slow, kind))
    if not got:
        continue
    a = got[0]
    if tags:
        want = [marked(t) for t in tags]
        check(a.get("line") in want, "%s: at %s (%s)" % (slow, " or ".join(want), a.get("line")))
    want = model(a, k)
    check(abs(a["speedup"] - want) <= 1e-6 * want, "%s: kernel %.4fx, the model's %.4fx" % (slow, a["speedup"], want))
    kf = kernel(fast)
    check(kf is not None and not [x for x in advice if x["kind"] == kind and x["node"] == kf["id"]],
          "%s: no %s advice" % (fast, kind))
# Scattered accesses: only kernels whose global instructions wait longer,
# each, than a DRAM access (the strided copy 4,326 cycles; the plain
# copy's 679 come with the bytes near the DRAM's peak).
for a in [a for a in advice if a["kind"] == "gpu-global-memory"]:
    k = nodes[a["node"]]
    il, ig = incl(k, "GPI_LOCAL"), incl(k, "GPI_GLOBAL")
    f = (incl(k, "GPS_LONG_SCOREBOARD") + incl(k, "GPS_LG_THROTTLE")) * ig / (il + ig)
    wait = advice_model.access_wait(f, ig)
    check(wait >= advice_model.DRAM_WAIT and ("%.0f cycles" % wait) in a["why"],
          "%s: %.0f cycles per global instruction, over %.0f" % (k["name"], wait, advice_model.DRAM_WAIT))
kk = kernel("chain_kept<1>")
check(kk is not None and not [a for a in advice if a["kind"] == "gpu-occupancy" and a["node"] == kk["id"]],
      "chain_kept<1>: no occupancy advice (its fix measured 0.97x)")
# Pageable copies: their time against the bytes at the pinned copies' rate.
pg = [a for a in advice if a["kind"] == "pageable-copies"]
check(len(pg) == 1 and ("advice.cu:%s)" % marked("PAGEABLE").split(":")[1]) in pg[0]["at"],
      "one piece of pageable-copies advice, at %s" % marked("PAGEABLE"))
if pg:
    copies = [n for n in doc["nodes"] if n.get("name") == "<gpu copy h2d>"]
    page = [n for n in copies if incl(n, "GXCOPY_PAGEABLE_BYTES")]
    pinned = [n for n in copies if not incl(n, "GXCOPY_PAGEABLE_BYTES")]
    rate = sum(incl(n, "GXCOPY_H2D_BYTES") for n in pinned) / sum(incl(n, "GXCOPY_H2D") for n in pinned)
    want = incl(page[0], "GXCOPY_H2D") / (incl(page[0], "GXCOPY_PAGEABLE_BYTES") / rate)
    check(len(page) == 1 and abs(pg[0]["speedup"] - want) <= 1e-6 * want,
          "pageable copies %.4fx, at the pinned rate %.4fx" % (pg[0]["speedup"], want))
# Loop unrolling: each estimate the first model's, from the loop's own
# GPO_UNROLL samples (what unrolling it 4 times hides); none for the kernels whose waits are a
# recurrence (v = v * a + b from one iteration to the next), however many.
for a in [a for a in advice if a["kind"] == "gpu-unroll"]:
    want, in_loop = unroll_model(doc, a)
    check(in_loop and abs(a["speedup"] - want) <= 1e-6 * want,
          "%s: unrolling %.4fx, the model's %.4fx" % (nodes[a["node"]]["name"], a["speedup"], want))
# Fast math: the precise expf and sinf (their inline code from the
# argument's reduction and the rounding on) advised at their line, the
# intrinsics not; the estimate the model's.
pm = [a for a in advice if a["kind"] == "gpu-math" and "math_precise" in a["name"]]
check(len(pm) == 1 and pm[0].get("line") == marked("PRECISE"),
      "math_precise: long-latency arithmetic at %s (%s)" % (marked("PRECISE"), [a.get("line") for a in pm]))
check(not [a for a in advice if a["kind"] == "gpu-math" and "math_fast" in a["name"]], "math_fast: no such advice")
for a in pm:
    want = math_model(doc, a)
    check(abs(a["speedup"] - want) <= 1e-6 * want, "math_precise: %.4fx, the model's %.4fx" % (a["speedup"], want))
for name in ("chain_open", "chain_reserved", "chain_kept<1>", "barrier_even"):
    k = kernel(name)
    check(k is not None and incl(k, "GPB_ARITH") > 0.3 * incl(k, "GPC_SAMPLES") and
          incl(k, "GPO_UNROLL") < 0.1 * incl(k, "GPC_SAMPLES") and
          not [a for a in advice if a["kind"] == "gpu-unroll" and a["node"] == k["id"]],
          "%s: its arithmetic waits are a recurrence, no unrolling advised" % name)
# Shared memory in loops: the pairs wait on none of it.
check(not [a for a in advice if a["kind"] == "gpu-shared"], "no gpu-shared advice")
occ = [a for a in advice if a["kind"] == "gpu-occupancy"]
check(occ and "shared memory" in occ[0]["try"], "chain_reserved: the shared memory named as the bound")
finish()
