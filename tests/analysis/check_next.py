#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What to do next (report/advice/) on profiles with known metrics: each
check's advice, its estimate by docs/ADVICE.md's models computed here, the
program's gain through the blame metrics (or an upper bound without them),
the ranking, and nothing where a check does not apply.

Usage: check_next.py GPUTOOL OUTDIR"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gtfiles  # noqa: E402
from advice_model import (DRAM_WAIT, access_wait, barrier_ratio, blocks_ratio, divergence_ratio, gone_ratio,  # noqa: E402
                          occupancy_ratio, omp_amdahl_saved, omp_fork_join_saved, omp_imbalance_saved,
                          omp_tasks_saved, stall_ratio, threads_ratio)

GPUTOOL, OUT = sys.argv[1:3]
bad = []
WALL = 1000000000
FACTS = {"wall_ns": str(WALL), "pc_period_cycles": "2048", "pc_schedulers": "4",
         "gpu_warps_per_sm": "0:64", "gpu_dram_bytes_per_s": "0:3352320000000"}


def check(cond, what):
    print("  %-76s %s" % (what, "ok" if cond else "FAIL"))
    if not cond:
        bad.append(what)


def near(a, b):
    return abs(a - b) <= 2e-8 * max(abs(a), abs(b), 1)  # the JSON has 9 digits


def kernel(p, site, name, gker, samples, lat, issued, notsel, occ=1000, lines=()):
    """A kernel context under site with its PC samples spread on lines
    (line, {metric: value}); the classes' counts on its first line."""
    k = p.node(p.ph(site, "<gpu kernel>"), gtfiles.NAME, name)
    for m, v in (("GKER", gker), ("GKER_COUNT", 1), ("GKER_OCC_THR", occ)):
        p.value(k, 0, m, v)
    first = None
    for line, vals in lines:
        n = p.node(k, gtfiles.NAME, "k.cu:%d" % line)
        first = first or n
        for m, v in vals.items():
            p.value(n, 0, m, v)
    for m, v in (("GPC_SAMPLES", samples), ("GPC_LATENCY", lat), ("GPC_ISSUED", issued),
                 ("GPC_NOT_SELECTED", notsel)):
        p.value(first, 0, m, v)
    return k


def report(p, name):
    path = os.path.join(OUT, name + ".gtprof")
    p.write(path)
    r = subprocess.run([GPUTOOL, "report", path, "--format", "json"], capture_output=True, text=True)
    check(r.returncode == 0, "%s: gputool report (%s)" % (name, r.stderr.strip()[:60]))
    text = subprocess.run([GPUTOOL, "report", path], capture_output=True, text=True).stdout
    return json.loads(r.stdout)["advice"], text


os.makedirs(OUT, exist_ok=True)

# ---- a run with blame: a barrier-bound kernel, pageable and pinned copies, waits ----
p = gtfiles.Profile(dict(FACTS))
main = p.frame(0, "main", line=1)
kb = kernel(p, p.frame(main, "step", line=10), "k_barrier", 100000000, 10000, 7000, 1000, 500,
            lines=((30, {"GPS_BARRIER": 6000}), (31, {"GPS_WAIT": 2000})))
p.value(kb, 0, "CPU_IDLE_CAUSE", 30000000)
kernel(p, p.frame(main, "tiny", line=11), "k_few", 1000000, 900, 800, 10, 10, lines=((40, {"GPS_BARRIER": 850}),))
pg = p.ph(p.frame(main, "upload", line=12), "<gpu copy h2d>")
for m, v in (("GXCOPY_H2D", 40000000), ("GXCOPY_H2D_BYTES", 400000000), ("GXCOPY_PAGEABLE_BYTES", 400000000)):
    p.value(pg, 0, m, v)
pn = p.ph(p.frame(main, "upload_pinned", line=13), "<gpu copy h2d>")
for m, v in (("GXCOPY_H2D", 10000000), ("GXCOPY_H2D_BYTES", 500000000)):
    p.value(pn, 0, m, v)
p.value(p.ph(p.frame(main, "wait", line=14), "<gpu sync>"), 0, "CPU_IDLE", 50000000)
p.value(p.frame(main, "prepare", line=15), 0, "GPU_IDLE_CAUSE", 20000000)
# The measurement's own CPU time, more than the program's, while the GPU
# idled: CUPTI's PC-sampling host library as a frame (a profile written
# before such frames went under a <tool: ...> node), and such a node.
p.value(p.node(p.frame(main, "setup", line=16), gtfiles.FRAME, "NVPW_CUDA_Profiler", "", 0,
               "/usr/local/cuda/extras/CUPTI/lib64/libnvperf_host.so"), 0, "GPU_IDLE_CAUSE", 40000000)
p.value(p.node(p.frame(main, "launch", line=17), gtfiles.NAME, "<tool: libcupti.so.13>"), 0,
        "GPU_IDLE_CAUSE", 30000000)
advice, text = report(p, "blame")
kinds = [a["kind"] for a in advice]
check(kinds == ["pageable-copies", "gpu-barrier", "cpu-gpu-overlap"],
      "ranked by the time saved: %s" % kinds)
by = {a["kind"]: a for a in advice}
a = by.get("pageable-copies", {})
# 400 MB at the pinned copies' 50 bytes/ns: 8 ms instead of 40.
check(near(a.get("speedup", 0), 5.0) and a.get("saved_ns") == 32000000 and not a.get("upper_bound"),
      "pageable copies: 5x, 32 ms saved (%s, %s)" % (a.get("speedup"), a.get("saved_ns")))
check(near(a.get("program_speedup", 0), WALL / (WALL - 32000000)), "pageable copies: the program's speedup")
a = by.get("gpu-barrier", {})
wr, waiting, f = 0.3, 0.85, 0.6
ratio = wr + (1 - wr) * (waiting - f) / waiting
check(near(a.get("speedup", 0), 1 / ratio), "barrier: %.6fx by the first model (%.6f)" % (1 / ratio, a.get("speedup", 0)))
# The GPU time saved (49.4 ms) is more than the CPU waited for the kernel: the wait is the gain.
check(a.get("saved_ns") == 30000000 and not a.get("upper_bound"), "barrier: the CPU's 30 ms wait saved, no more")
check(a.get("line") == "k.cu:30" and a.get("samples") == 6000 and a.get("kernel_samples") == 10000,
      "barrier: at its line, 6000 of 10000 samples")
check("k_few" not in text.split("What to do next")[1].split("\n\n")[0], "no advice for a kernel of 900 samples")
a = by.get("cpu-gpu-overlap", {})
check(a.get("saved_ns") == 20000000 and a.get("upper_bound") and a.get("cpu_work_at", "").startswith("prepare"),
      "overlap: up to the 20 ms the GPU idled, the CPU work named, not the tool's (%s)" % a.get("cpu_work_at"))
check("0.020 s of work" in a.get("why", ""), "overlap: the tool's time not counted as the program's work")
check("What to do next (3 of 3" in text and "program up to" in text, "the text section")

# ---- no blame: occupancy and local memory, upper bounds ----
p = gtfiles.Profile(dict(FACTS))
main = p.frame(0, "main", line=1)
ko = kernel(p, p.frame(main, "a", line=10), "k_occ", 100000000, 5000, 2500, 2000, 100, occ=250,
            lines=((50, {"GPS_WAIT": 2500}),))
for m, v in (("GKER_OCC_SLOTS", 1000), ("GKER_OCC_REGS", 500), ("GKER_OCC_SMEM", 250), ("GKER_DYMEM", 65536)):
    p.value(ko, 0, m, v)
kl = kernel(p, p.frame(main, "b", line=11), "k_local", 200000000, 20000, 16000, 1000, 1000,
            lines=((60, {"GPS_LONG_SCOREBOARD": 8000, "GPB_LOCAL": 7000, "GPI_LOCAL": 600}),
                   (61, {"GPS_LG_THROTTLE": 9000, "GPI_GLOBAL": 200, "GPB_GLOBAL": 1000, "GPI_FP32": 200})))
advice, text = report(p, "noblame")
by = {a["kind"]: a for a in advice}
a = by.get("gpu-occupancy", {})
# Shared memory holds it at 25 % (4 warps per scheduler); registers, the
# next bound, allow 50 % (8); the warps are ready 42 % of their cycles.
want = 1 / occupancy_ratio(0, 0.42, 4, 8)
check(near(a.get("speedup", 0), want) and a.get("upper_bound") and
      abs(a.get("saved_ns", 0) - (100000000 - 100000000 / want)) <= 1,
      "occupancy: %.4fx to the registers' 50 %% (%s)" % (want, a.get("speedup")))
check("shared memory" in a.get("try", "") and "65536" in a.get("try", ""), "occupancy: the bytes to cut")
a = by.get("gpu-local-memory", {})
S, wr, waiting = 20000.0, 0.2, 0.9
f = (8000 + 9000) / S * 600 / 800
cut = 600 / 1000.0
want = 1 / gone_ratio(wr, waiting, f, cut, 16)
check(near(a.get("speedup", 0), want), "local memory: %.6fx by the second model (%.6f)" % (want, a.get("speedup", 0)))
check(a.get("line") == "k.cu:60", "local memory: at the line its waits are blamed on")
check("gpu-global-memory" not in by, "no scattered-access advice where global waits are a quarter")
# ---- the parallel checks: blocks too small, a grid of fewer blocks than SMs ----
p = gtfiles.Profile(dict(FACTS, pc_sm_count="132"))
main = p.frame(0, "main", line=1)
# 65,536 blocks of 16 threads: half of each warp's lanes idle, and the SM's
# 32 block slots hold 32 warps (50 %); warps ready 8 % of their cycles.
kt = kernel(p, p.frame(main, "a", line=10), "k_threads", 100000000, 10000, 9000, 800, 0, occ=500,
            lines=((50, {"GPS_LONG_SCOREBOARD": 9000}),))
# 2 blocks of 512 threads on 132 SMs; warps ready 20 % of their cycles.
kg = kernel(p, p.frame(main, "b", line=11), "k_blocks", 100000000, 10000, 5000, 1500, 500,
            lines=((60, {"GPS_WAIT": 5000}),))
# 128 blocks of 16 threads: the grid, not the block slots, holds its warps.
kf = kernel(p, p.frame(main, "c", line=12), "k_few_blocks", 100000000, 10000, 9000, 800, 0, occ=500,
            lines=((70, {"GPS_WAIT": 9000}),))
for k, blocks, thr, occs in ((kt, 65536, 16, 500), (kg, 2, 512, 1000), (kf, 128, 16, 500)):
    for m, v in (("GKER_BLKS", blocks), ("GKER_BLK_THR", thr), ("GKER_OCC_SLOTS", occs),
                 ("GKER_OCC_REGS", occs), ("GKER_OCC_SMEM", occs)):
        p.value(k, 0, m, v)
advice, text = report(p, "parallel")
got = {(a["kind"], a["name"].split("(")[0]): a for a in advice}
a = got.get(("gpu-threads", "k_threads"), {})
want = 1 / threads_ratio(0.5, 0.08, 8, 16)
check(near(a.get("speedup", 0), want) and "blocks of 64 threads" in a.get("try", ""),
      "threads: %.4fx, blocks of 64 threads (%s)" % (want, a.get("speedup")))
a = got.get(("gpu-blocks", "k_blocks"), {})
want = 1 / blocks_ratio(2, 8, 0.2, 4, 1)
check(near(a.get("speedup", 0), want) and "blocks of 128 threads" in a.get("try", ""),
      "blocks: %.4fx, 8 blocks of 128 threads (%s)" % (want, a.get("speedup")))
check(not [a for a in advice if "k_few_blocks" in a["name"]] and
      not [a for a in advice if a["kind"] == "gpu-occupancy"],
      "no thread, block or occupancy advice where the grid holds the warps")
# ---- scattered global accesses: only where each global instruction waits longer than a DRAM access ----
p = gtfiles.Profile(dict(FACTS))
main = p.frame(0, "main", line=1)
# 16000 of 20000 samples wait on global loads; 20 issued samples of global
# instructions (800 cycles of waiting each) in one kernel, 200 (80 cycles
# each: served by the caches) in the other; the bytes asked for are far
# under the DRAM's peak in both.
for name, ig, line in (("k_scattered", 20, 70), ("k_cached", 200, 80)):
    kernel(p, p.frame(main, name[2:], line=line), name, 200000000, 20000, 16000, 1000, 1000,
           lines=((line, {"GPS_LONG_SCOREBOARD": 16000, "GPB_GLOBAL": 15000, "GPI_GLOBAL": ig}),))
advice, text = report(p, "global")
glob = [a for a in advice if a["kind"] == "gpu-global-memory"]
check([a["name"].split()[0] for a in glob] == ["k_scattered"],
      "scattered accesses: k_scattered only, not k_cached (%s)" % [a["name"] for a in glob])
if glob:
    a = glob[0]
    check(access_wait(16000, 20) >= DRAM_WAIT > access_wait(16000, 200), "the oracle's threshold between them")
    want = 1 / stall_ratio(0.2, 0.9, 0.8, 0)
    check(near(a["speedup"], want), "scattered accesses: %.6fx by the first model (%.6f)" % (want, a["speedup"]))
    check(a.get("line") == "k.cu:70" and "800 cycles" in a.get("why", ""),
          "scattered accesses: at its line, 800 cycles a global instruction (%s)" % a.get("why"))
# ---- OpenCL's checks: a run-time build's host time is the gain (up to), the others unestimated ----
p = gtfiles.Profile(dict(FACTS))
main = p.frame(0, "main", line=1)
jit = p.ph(p.frame(main, "build", line=10), "<gpu jit>")
for m, v in (("GJIT", 20000000), ("GJIT_COUNT", 1), ("SINGLE_DEVICE_USE_AOT_COMPILATION", 1)):
    p.value(jit, 0, m, v)
p.value(p.frame(main, "make_queue", line=11), 0, "INORDER_QUEUE", 1)
advice, text = report(p, "opencl")
kinds = [a["kind"] for a in advice]
check(kinds == ["opencl-aot-compilation", "opencl-inorder-queue"], "OpenCL: ranked, the estimated first: %s" % kinds)
if len(advice) == 2:
    a, q = advice
    check(a["saved_ns"] == 20000000 and a["upper_bound"] and near(a["program_speedup"], WALL / (WALL - 20000000)),
          "run-time build: up to its 20 ms of host time")
    check(q["program_speedup"] == 0 and q["saved_ns"] == 0 and q["at"].startswith("make_queue"),
          "in-order queue: at its creation, not estimated")
# ---- nothing applies: one line says so, in the text and the JSON ----
for name, metric, why in (("none", "CPUTIME", "measured none of what the checks read"),
                          ("small", "CPU_IDLE", "no check found a change worth a line")):
    p = gtfiles.Profile(dict(FACTS))
    p.value(p.frame(p.frame(0, "main", line=1), "work", line=10), 0, metric, 1000)
    advice, text = report(p, name)
    doc = json.loads(subprocess.run([GPUTOOL, "report", os.path.join(OUT, name + ".gtprof"), "--format", "json"],
                                    capture_output=True, text=True).stdout)
    check(advice == [] and "No advice applies: the run " + why in text or "No advice applies: " + why in text,
          "%s: the text says no advice applies, and why" % name)
    check(why in doc.get("advice_none", ""), "%s: the JSON's advice_none says why (%s)" % (name, doc.get("advice_none")))
# ---- held back: an estimate under 1.02x comes after the unestimated advice ----
p = gtfiles.Profile(dict(FACTS))
main = p.frame(0, "main", line=1)
for line, ns in ((10, 30000000), (12, 10000000)):
    jit = p.ph(p.frame(main, "build", line=line), "<gpu jit>")
    for m, v in (("GJIT", ns), ("GJIT_COUNT", 1), ("SINGLE_DEVICE_USE_AOT_COMPILATION", 1)):
        p.value(jit, 0, m, v)
p.value(p.frame(main, "make_queue", line=11), 0, "INORDER_QUEUE", 1)
advice, text = report(p, "heldback")
got = [(a["kind"], a["saved_ns"]) for a in advice]
check(got == [("opencl-aot-compilation", 30000000), ("opencl-inorder-queue", 0), ("opencl-aot-compilation", 10000000)],
      "held back: 1.03x, then the unestimated, then 1.01x (%s)" % got)
# ---- launch-bound kernels: the gaps after their issue, saved up to their total ----
p = gtfiles.Profile(dict(FACTS))
main = p.frame(0, "main", line=1)
kt = p.node(p.ph(p.frame(main, "chain", line=10), "<gpu kernel>"), gtfiles.NAME, "k_tiny")
for m, v in (("GKER", 10000000), ("GKER_COUNT", 10000), ("GKER_LAUNCH_GAP", 27000000),
             ("GKER_LAUNCH_GAP_COUNT", 9000)):
    p.value(kt, 0, m, v)
# A long kernel whose stream idled a little before each launch: under 5 %.
kw = p.node(p.ph(p.frame(main, "big", line=11), "<gpu kernel>"), gtfiles.NAME, "k_big")
for m, v in (("GKER", 100000000), ("GKER_COUNT", 100), ("GKER_LAUNCH_GAP", 2000000),
             ("GKER_LAUNCH_GAP_COUNT", 100)):
    p.value(kw, 0, m, v)
advice, text = report(p, "launches")
lb = [a for a in advice if a["kind"] == "launch-bound"]
check(len(lb) == 1 and lb[0]["name"] == "k_tiny", "launch-bound: the tiny kernel only (%s)" % [a["name"] for a in lb])
if lb:
    a = lb[0]
    busy = 10000000 * 9000 / 10000.0
    check(near(a["speedup"], (busy + 27000000) / busy), "launch-bound: (D n/N + G) / (D n/N) = %.6f (%.6f)" %
          ((busy + 27000000) / busy, a["speedup"]))
    check(a["saved_ns"] == 27000000 and a["upper_bound"] and a.get("launched_at", "").startswith("chain"),
          "launch-bound: saves up to the gaps, named at its launch site")
# ---- divergence: instruction counts (a patched run: speedups, no program gain) ----
p = gtfiles.Profile(dict(FACTS))
main = p.frame(0, "main", line=1)
kd = p.node(p.ph(p.frame(main, "lanes", line=10), "<gpu kernel>"), gtfiles.NAME, "k_lanes")
for m, v in (("GKER", 50000000), ("GKER_COUNT", 1)):
    p.value(kd, 0, m, v)
# Line 70 runs at half warps (16 of 32 threads), line 71 at full ones.
for line, inst, threads in ((70, 3000, 3000 * 16), (71, 1000, 1000 * 32)):
    p.value(p.node(kd, gtfiles.NAME, "k.cu:%d" % line), 0, "GSC_INST", inst)
    p.value(p.node(kd, gtfiles.NAME, "k.cu:%d" % line), 0, "GSC_THREAD_INST", threads)
ku = p.node(p.ph(p.frame(main, "warps", line=11), "<gpu kernel>"), gtfiles.NAME, "k_warps")
p.value(ku, 0, "GKER", 20000000)
p.value(ku, 0, "GKER_COUNT", 1)
p.value(p.node(ku, gtfiles.NAME, "k.cu:80"), 0, "GSC_INST", 4000)
p.value(p.node(ku, gtfiles.NAME, "k.cu:80"), 0, "GSC_THREAD_INST", 4000 * 31)
advice, text = report(p, "divergence")
dv = [a for a in advice if a["kind"] == "gpu-divergence"]
check(len(dv) == 1 and dv[0]["name"] == "k_lanes", "divergence: the kernel at half warps only (%s)" %
      [a["name"] for a in dv])
if dv:
    a = dv[0]
    cut = 1 - (3000 * 16 + 1000 * 32) / 32.0 / 4000
    want = 1 / divergence_ratio(cut)
    check(near(a["speedup"], want), "divergence: 1 / (1 - c) = %.6f (%.6f)" % (want, a["speedup"]))
    check(a.get("line") == "k.cu:70", "divergence: at the line with the most instructions for idle threads")
    check(a["saved_ns"] == 0 and a["program_speedup"] == 0, "divergence: a patched run's times give no gain")
sec = text.split("GPU source lines (instruction counts")[1].split("\n\n")[0] if "(instruction counts" in text else ""
rows = [l.split() for l in sec.splitlines() if "k.cu:" in l]
check([(r[0], r[2], r[3]) for r in rows] == [("4000", "96.9%", "k.cu:80"), ("3000", "50.0%", "k.cu:70"),
                                            ("1000", "100.0%", "k.cu:71")],
      "the counted lines, by warp instructions, with their thread efficiency: %s" % rows)
# ---- a wait for one stream, then work on another: listed, gain not estimated ----
p = gtfiles.Profile(dict(FACTS))
main = p.frame(0, "main", line=1)
ws = p.ph(p.frame(main, "wait_first", line=20), "<gpu sync>")
for m, v in (("GSYNC", 60000000), ("GSYNC_COUNT", 10), ("GSYNC_SERIAL", 50000000), ("GSYNC_SERIAL_COUNT", 10)):
    p.value(ws, 0, m, v)
wt = p.ph(p.frame(main, "wait_tiny", line=21), "<gpu sync>")
for m, v in (("GSYNC", 1000000), ("GSYNC_COUNT", 10), ("GSYNC_SERIAL", 5000000), ("GSYNC_SERIAL_COUNT", 10)):
    p.value(wt, 0, m, v)
advice, text = report(p, "serial")
ss = [a for a in advice if a["kind"] == "serializing-sync"]
check(len(ss) == 1 and ss[0]["at"].split(" < ")[1].startswith("wait_first"),
      "serializing waits: the one over 1 %% of the wall time only (%s)" % [a.get("at") for a in ss])
check(all(a["saved_ns"] == 0 and a["program_speedup"] == 0 for a in ss) and "50.000 ms" in ss[0]["why"],
      "serializing waits: the overlap bound said, no gain estimated (%s)" % [a.get("why") for a in ss])
# ---- the code optimizers: a rolled loop, a call not inlined, conversions and a math subroutine ----
p = gtfiles.Profile(dict(FACTS))
main = p.frame(0, "main", line=1)


def samples(n, s, lat, iss, ns, **extra):
    for m, v in (("GPC_SAMPLES", s), ("GPC_LATENCY", lat), ("GPC_ISSUED", iss), ("GPC_NOT_SELECTED", ns)):
        p.value(n, 0, m, v)
    for m, v in extra.items():
        p.value(n, 0, m, v)


kc = p.node(p.ph(p.frame(main, "code", line=30), "<gpu kernel>"), gtfiles.NAME, "k_code")
for m, v in (("GKER", 100000000), ("GKER_COUNT", 1), ("GKER_OCC_THR", 1000)):
    p.value(kc, 0, m, v)
# S 10000, L 5000 (W_R 0.5), issued 2000, not selected 500 (waiting 0.75).
samples(p.node(kc, gtfiles.NAME, "k.cu:40"), 2000, 1000, 200, 100, GPB_CONVERT=1500, GPO_IDIOM_ISSUED=150)
samples(p.node(p.node(kc, gtfiles.NAME, "loop at k.cu:50"), gtfiles.NAME, "k.cu:51"), 5000, 2500, 1500, 300,
        GPO_UNROLL=3000)
samples(p.node(p.node(p.node(kc, gtfiles.NAME, "k.cu:60"), gtfiles.NAME, "helper(float)"), gtfiles.NAME, "h.cu:5"),
        2000, 1000, 200, 50)
samples(p.node(p.node(p.node(kc, gtfiles.NAME, "k.cu:70"), gtfiles.NAME, "__cuda_sm20_rem_u64"), gtfiles.NAME,
               "pc 0x100"), 1000, 500, 100, 50)
# The same loop in a kernel whose schedulers issue in 98 % of the cycles:
# nothing to hide.
kb = p.node(p.ph(p.frame(main, "busy", line=31), "<gpu kernel>"), gtfiles.NAME, "k_busy")
for m, v in (("GKER", 100000000), ("GKER_COUNT", 1), ("GKER_OCC_THR", 1000)):
    p.value(kb, 0, m, v)
samples(p.node(p.node(kb, gtfiles.NAME, "loop at k.cu:90"), gtfiles.NAME, "k.cu:91"), 10000, 200, 6000, 1000,
        GPO_UNROLL=3000)
# A call in a loop: its function's 5400 waiting samples, 1500 of them for
# branch targets (its call and return), and its own instructions at the
# call's line and outside its loop (GPI_CONTROL, GPI_OTHER: 500 of the
# kernel's 2000 issued samples); the function's loop's branches are its work.
kl = p.node(p.ph(p.frame(main, "calls", line=32), "<gpu kernel>"), gtfiles.NAME, "k_call")
for m, v in (("GKER", 100000000), ("GKER_COUNT", 1), ("GKER_OCC_THR", 1000)):
    p.value(kl, 0, m, v)
call = p.node(p.node(kl, gtfiles.NAME, "loop at k.cu:80"), gtfiles.NAME, "k.cu:81")
samples(call, 4000, 2000, 1500, 400, GPI_CONTROL=100, GPI_OTHER=200)
step = p.node(call, gtfiles.NAME, "step(float)")
samples(p.node(step, gtfiles.NAME, "s.cu:3"), 5000, 2500, 400, 100, GPS_BRANCH=1500, GPI_CONTROL=150, GPI_OTHER=50)
samples(p.node(p.node(step, gtfiles.NAME, "loop at s.cu:5"), gtfiles.NAME, "s.cu:6"), 1000, 500, 100, 0,
        GPI_CONTROL=80)
# An issue-bound kernel (W_R 0.8, waiting 0.2) whose idioms wait in 3 % of
# the samples but issue 1200 of its 4000 instructions (the ones their
# cheaper forms remove): the issue slots alone make it long-latency
# arithmetic.
ki = p.node(p.ph(p.frame(main, "issue", line=33), "<gpu kernel>"), gtfiles.NAME, "k_issue")
for m, v in (("GKER", 100000000), ("GKER_COUNT", 1), ("GKER_OCC_THR", 1000)):
    p.value(ki, 0, m, v)
samples(p.node(ki, gtfiles.NAME, "k.cu:100"), 10000, 2000, 4000, 4000, GPB_CONVERT=300, GPO_IDIOM_ISSUED=1200)
advice, text = report(p, "code")
got = [a for a in advice if a["kind"] == "gpu-math" and a["name"] == "k_issue"]
check(len(got) == 1 and near(got[0]["speedup"], 1 / stall_ratio(0.8, 0.2, 0.03, 0.3)),
      "gpu-math where the idioms take 30%% of the issue slots: %.6fx (%s)" %
      (1 / stall_ratio(0.8, 0.2, 0.03, 0.3), [a["speedup"] for a in got]))
wr, waiting = 0.5, 0.75
for kind, name, line, f, cut, n in (
        ("gpu-unroll", "k_code", "k.cu:51", 0.3, 0, 3000),        # M 3000: what unrolling hides
        ("gpu-inline", "k_code", "k.cu:60", 0.175, 0, 1750),      # helper's 1750 waiting, filled by issue
        ("gpu-inline", "k_call", "k.cu:81", 0.4425, 0.25, 5400),  # 1500 + 3/4 of 3900; 500 of 2000 issued
        ("gpu-math", "k_code", "k.cu:40", 0.235, 0.125, 2500)):  # 1500 + the subroutine's 850; 100 + 150 issued
    got = [a for a in advice if a["kind"] == kind and a["name"] == name]
    check(len(got) == 1, "%s: one, for %s (%s)" % (kind, name, [a["name"] for a in advice if a["kind"] == kind]))
    if got:
        a = got[0]
        ratio = stall_ratio(wr, waiting, f, cut)
        check(near(a["speedup"], 1 / ratio), "%s: %.6fx by the first model (%.6f)" % (kind, 1 / ratio, a["speedup"]))
        check(a.get("line") == line and a.get("samples") == n and a.get("kernel_samples") == 10000,
              "%s: at %s, %d of 10000 samples (%s, %s)" % (kind, line, n, a.get("line"), a.get("samples")))
check("__cuda_sm20_rem_u64" not in "".join(a["why"] for a in advice if a["kind"] == "gpu-inline") and
      "__cuda_sm20_rem_u64" in "".join(a["why"] for a in advice if a["kind"] == "gpu-math"),
      "the math library's subroutine: not to inline, named as long-latency arithmetic")
check(not [a for a in advice if a["name"] == "k_busy"], "no advice where the schedulers issue in 98% of the cycles")
# ---- barriers that serialize global loads; a loop waiting on shared memory ----
p = gtfiles.Profile(dict(FACTS))
main = p.frame(0, "main", line=1)
# 5% at the barrier, under the 10% a barrier alone needs; loads of 2000 and
# 1500 samples outside loops, between barriers: 1500 overlap once issued
# together. The loop's load (k.cu:92) is not counted.
kernel(p, p.frame(main, "sync", line=40), "k_sync", 100000000, 10000, 7000, 1000, 500,
       lines=((90, {"GPS_BARRIER": 500}), (91, {"GPB_GLOBAL": 2000}), (93, {"GPB_GLOBAL": 1500})))
kl = kernel(p, p.frame(main, "rmw", line=41), "k_rmw", 100000000, 10000, 7000, 1000, 500,
            lines=((100, {}),))
loop = p.node(kl, gtfiles.NAME, "loop at k.cu:101")
p.value(p.node(loop, gtfiles.NAME, "k.cu:102"), 0, "GPB_SHARED", 2500)
p.value(p.node(loop, gtfiles.NAME, "k.cu:103"), 0, "GPB_SHARED", 500)
p.value(p.node(kl, gtfiles.NAME, "k.cu:105"), 0, "GPB_SHARED", 4000)  # outside the loop: not counted
advice, text = report(p, "sync")
wr, waiting = 0.3, 0.85
got = [a for a in advice if a["kind"] == "gpu-barrier" and a["name"] == "k_sync"]
ratio = barrier_ratio(wr, waiting, 0.05, 0.35, 0.2)
check(len(got) == 1 and near(got[0]["speedup"], 1 / ratio) and got[0].get("line") == "k.cu:90",
      "barrier: the serialized loads counted, %.6fx at k.cu:90 (%s)" % (1 / ratio, [(a["speedup"], a.get("line")) for a in got]))
got = [a for a in advice if a["kind"] == "gpu-shared" and a["name"] == "k_rmw"]
ratio = stall_ratio(wr, waiting, 0.3)
check(len(got) == 1 and near(got[0]["speedup"], 1 / ratio) and got[0].get("line") == "k.cu:102" and
      got[0].get("samples") == 3000, "shared: the loop's 3000 samples, %.6fx at k.cu:102 (%s)" % (1 / ratio, [(a["speedup"], a.get("line"), a.get("samples")) for a in got]))
# ---- OpenMP: an imbalanced region, tiny regions, serial time, fine tasks ----
p = gtfiles.Profile(dict(FACTS), threads=4)
main = p.frame(0, "main", line=1)


def region(site, count, thr, par, work, wait=0):
    r = p.ph(site, "<omp parallel>")
    for m, v in (("OMP_PAR_COUNT", count), ("OMP_PAR_THREADS", thr), ("OMP_PAR_TIME", par), ("OMP_WORK", work)):
        p.value(r, 0, m, v)
    if wait:
        p.value(p.ph(r, "<omp implicit barrier>"), 0, "OMP_WAIT", wait)
    return r


# 200 instances of 2 ms on 4 threads, 1.25 ms of mean work: waits of 500 ms.
region(p.frame(main, "dot", line=20), 200, 800, 400000000, 1000000000, 500000000)
# 10,000 instances of 10 us on 4 threads, 1 us of mean work: fork/join;
# its teams timed by sampling, 624 instances.
p.value(region(p.frame(main, "step", line=30), 10000, 40000, 100000000, 40000000, 60000000), 0,
        "OMP_PAR_TIME_SAMPLES", 624)
# Serial: 200 ms at two lines of init(); a worker's idle time and a
# region's CPU time are not serial.
init = p.frame(main, "init", line=40)
p.value(p.frame(init, "fill", line=41), 0, "CPUTIME", 150000000)
p.value(p.frame(init, "fill", line=42), 0, "CPUTIME", 50000000)
p.value(p.frame(p.ph(0, "<omp idle>"), "__kmp_wait", line=1), 1, "CPUTIME", 500000000)
# 100,000 tasks of 0.4 us; the team's work around them is 50 ms; a region
# of 2 threads with no waits.
tr = region(p.frame(main, "tree", line=50), 1, 2, 50000000, 90000000)
tk = p.ph(p.frame(tr, "walk", line=51), "<omp task>")
p.value(tk, 0, "OMP_EXPLICIT_TASKS", 100000)
p.value(tk, 0, "OMP_EXPLICIT_TASK_TIME", 40000000)
p.value(p.frame(tr, "walk", line=52), 0, "CPUTIME", 300000000)
# A small imbalance (5 ms over 4 threads: under 1 % of the wall time).
region(p.frame(main, "small", line=60), 10, 40, 20000000, 60000000, 5000000)
advice, text = report(p, "openmp")
got = [(a["kind"], a["at"].split(" < ")[1].split(" (")[0] if a["kind"] != "omp-serial" else a["at"].split(" (")[0],
        a["saved_ns"]) for a in advice]
want = [("omp-serial", "fill", int(omp_amdahl_saved(200000000, 4))),
        ("omp-imbalance", "dot", int(omp_imbalance_saved(500000000, 4))),
        ("omp-fork-join", "step", int(omp_fork_join_saved(100000000, 40000000, 4))),
        ("omp-fine-tasks", "tree", int(omp_tasks_saved(90000000, 40000000, 2)))]
check(got == want, "OpenMP: the four kinds at their places, ranked, by the models (%s)" % got)
by = {a["kind"]: a for a in advice}
a = by.get("omp-imbalance", {})
check(near(a.get("speedup", 0), 400 / 275.0) and not a.get("upper_bound") and "line" not in a,
      "imbalance: the region 400 ms -> 275 ms, not an upper bound (%s)" % a.get("speedup"))
check(by.get("omp-serial", {}).get("at", "").startswith("fill (app.c:41)") and by.get("omp-serial", {}).get("upper_bound"),
      "serial: named at its hottest line, an upper bound (%s)" % by.get("omp-serial", {}).get("at"))
check(by.get("omp-fork-join", {}).get("upper_bound") and "omp-imbalance" not in
      [a["kind"] for a in advice if "step" in a["at"]], "fork/join: an upper bound, and no imbalance for that region")
check("What to do next (4 of 4" in text and "the region: 1.45x faster" in text, "OpenMP: the text section")
check(by.get("omp-fork-join", {}).get("why", "").endswith("(work and waits estimated from the 624 instances whose "
                                                           "team was timed)") and
      "estimated" not in by.get("omp-imbalance", {}).get("why", "estimated"),
      "the fork/join region's why says its teams were timed by sampling, the imbalanced one's does not")


def advice_items(text):
    """Each piece of the text's advice, its lines after the first joined."""
    lines = text.splitlines()
    heads = [k for k, ln in enumerate(lines) if ln.startswith("What to do next (")]
    items = []
    for ln in lines[heads[0] + 1:] if heads else []:
        if not ln.strip():
            break
        if re.match(r"^\s+\d+\. ", ln):
            items.append([])
        elif items:
            items[-1].append(ln.strip())
    return [" ".join(it) for it in items]


# Broken to fit the width (the imbalance's try is over 250 characters),
# the text still says each piece's why and try whole, as the JSON does.
narrow = subprocess.run([GPUTOOL, "report", os.path.join(OUT, "openmp.gtprof"), "--width", "60"],
                        capture_output=True, text=True).stdout
for t, width in ((text, 160), (narrow, 60)):
    items = advice_items(t)
    check(len(items) == len(advice), "OpenMP at width %d: %d pieces in the text" % (width, len(items)))
    for a, j in zip(advice, items):
        check(a["why"] in j and "try: " + a["try"] in j,
              "OpenMP at width %d: %s's why and try whole (%r)" % (width, a["kind"], j))
    sec = t[t.find("What to do next"):]
    sec = sec[:sec.find("\n\n") if "\n\n" in sec else len(sec)]
    check(all(len(ln) <= width for ln in sec.splitlines()),
          "OpenMP at width %d: advice lines wider: %s" % (width, [ln for ln in sec.splitlines() if len(ln) > width]))
# A CPU-only run without OpenMP says why nothing applies.
p = gtfiles.Profile(dict(FACTS))
p.value(p.frame(p.frame(0, "main", line=1), "work", line=10), 0, "CPUTIME", 1000)
advice, text = report(p, "cpuonly")
check(advice == [] and "a CPU-only run is advised on its parallel regions only" in text,
      "a CPU-only run: no advice, and why")
# An OpenMP run with nothing worth a line.
p = gtfiles.Profile(dict(FACTS))
region(p.frame(p.frame(0, "main", line=1), "fine", line=10), 10, 20, 100000000, 190000000, 1000000)
advice, text = report(p, "ompnone")
check(advice == [] and "No advice applies: no check found a change worth a line" in text,
      "an OpenMP run with balanced regions: no advice, and why")
# A PC-sampling run lists the instruction-count metrics without counting
# (GSC_INST empty): its kernels ran unpatched, and a kernel's advice gets the
# program's gain from the CPU's wait for it.
p = gtfiles.Profile(dict(FACTS))
kb = kernel(p, p.frame(p.frame(0, "main", line=1), "step", line=20), "k_blamed", 100000000, 10000, 8000, 1500, 500,
            lines=((30, {"GPS_BARRIER": 4000}),))
p.value(kb, 0, "CPU_IDLE_CAUSE", 50000000)
p.metric("GSC_INST")
advice, text = report(p, "listed")
got = [a for a in advice if a["kind"] == "gpu-barrier"]
if got:
    a = got[0]
    saved = min(50000000, 100000000 * (1 - 1 / a["speedup"]))
    check(abs(a.get("saved_ns", 0) - saved) <= 2 and abs(a.get("program_speedup", 0) - WALL / (WALL - saved)) < 1e-6,
          "unpatched kernels: the program's gain, %.0f ns saved (%s)" % (saved, a.get("saved_ns")))
else:
    check(False, "unpatched kernels: a barrier item (%s)" % [a["kind"] for a in advice])
print("%d failures" % len(bad))
sys.exit(1 if bad else 0)
