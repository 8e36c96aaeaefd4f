#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""PC sampling's hardware buffer filled: the report says how much of the
kernels' time the samples cover and the period that keeps a run like it
whole (report/advice.c, pc_coverage), on profiles with known metrics: an
H200's 132 SMs at 1980 MHz, a sample every 4096 cycles, one kernel of 0.1 s
sampled at 90 % and one of 0.9 s after the buffer filled, with no samples.
Covered: 0.9 * 0.1 / 1.0 = 9.0 %; the period that keeps it all with a
quarter to spare: 2^(12 + ceil(log2(1.25 / 0.09))) = 2^16.

Usage: check_pc_coverage.py GPUTOOL OUTDIR"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gtfiles  # noqa: E402

GPUTOOL, OUT = sys.argv[1:3]
bad = []
SMS, KHZ, PERIOD = 132, 1980000, 4096
RATE = SMS * KHZ * 1000 / PERIOD  # samples a second of a busy GPU


def check(cond, what):
    print("  %-76s %s" % (what, "ok" if cond else "FAIL"))
    if not cond:
        bad.append(what)


def profile(name, full, rank=0, path=None):
    facts = {"rank": str(rank), "pid": str(100 + rank), "exe": "/bin/app", "wall_ns": "2000000000", "pc_period_cycles": str(PERIOD), "pc_sm_clock_khz": str(KHZ),
             "pc_sm_count": str(SMS), "pc_schedulers": "4"}
    if full:
        facts["pc_buffer_full"] = "1"
    p = gtfiles.Profile(facts)
    main = p.frame(0, "main", line=1)
    for fn, line, gker, samples in (("early", 10, 100000000, int(0.9 * 0.1 * RATE)),
                                    ("late", 11, 900000000, 0)):
        k = p.node(p.ph(p.frame(main, fn, line=line), "<gpu kernel>"), gtfiles.NAME, fn + "_kernel")
        for m, v in (("GKER", gker), ("GKER_COUNT", 1)):
            p.value(k, 0, m, v)
        if samples:
            n = p.node(k, gtfiles.NAME, "k.cu:%d" % (30 + line))
            for m, v in (("GPC_SAMPLES", samples), ("GPC_LATENCY", samples // 2), ("GPC_ISSUED", samples // 4),
                         ("GPC_NOT_SELECTED", samples // 8), ("GPS_LONG_SCOREBOARD", samples // 2)):
                p.value(n, 0, m, v)
    path = path or os.path.join(OUT, name + ".gtprof")
    p.write(path)
    r = subprocess.run([GPUTOOL, "report", path], capture_output=True, text=True)
    check(r.returncode == 0, "%s: gputool report exits 0 (%s)" % (name, r.stderr.strip()[:60]))
    return r.stdout


os.makedirs(OUT, exist_ok=True)
text = profile("filled", True)
m = re.search(r"the samples cover about ([0-9.]+)% of the kernels' ([0-9.]+) GPU s; the kernels after it have none", text)
check(m is not None, "filled: the coverage line is under GPU kernels by PC samples")
if m:
    check(abs(float(m.group(1)) - 9.0) <= 0.05, "filled: 9.0%% of the kernels' time covered (%s)" % m.group(1))
    check(m.group(2) == "1.000", "filled: of 1.000 GPU s (%s)" % m.group(2))
m = re.search(r"GPUTOOL_PC_SAMPLING=([0-9]+) \(a sample every ([0-9]+) cycles\)", text)
check(m is not None and m.group(1) == "16" and m.group(2) == "65536",
      "filled: GPUTOOL_PC_SAMPLING=16 suggested (%s)" % (str(m.groups()) if m else "none"))
text = profile("whole", False)
check("GPU kernels by PC samples" in text and "the samples cover" not in text,
      "not filled: the section, and no coverage line")
# Two processes merged, the second one's buffer filled: the merged kernels
# are partial (the same 9.0 %: both hold the same kernels).
ranks = os.path.join(OUT, "ranks")
os.makedirs(ranks, exist_ok=True)
profile("rank0", False, 0, os.path.join(ranks, "app-0-100.gtprof"))
profile("rank1", True, 1, os.path.join(ranks, "app-1-101.gtprof"))
r = subprocess.run([GPUTOOL, "report", ranks], capture_output=True, text=True)
m = re.search(r"the samples cover about ([0-9.]+)% of the kernels' ([0-9.]+) GPU s", r.stdout)
check(r.returncode == 0 and m is not None and abs(float(m.group(1)) - 9.0) <= 0.05 and m.group(2) == "2.000",
      "merged, rank 1 filled: 9.0%% of 2.000 GPU s (%s)" % (str(m.groups()) if m else r.stderr.strip()[:60]))
if bad:
    print("%d of the checks failed" % len(bad))
    sys.exit(1)
print("all passed")
