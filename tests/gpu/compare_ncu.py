# SPDX-License-Identifier: MIT
"""The instructions a kernel issued, as gputool derives them from PC samples
alone (equations 10 and 11 of docs/CUDA.md), against what Nsight Compute
counts for the same program.

Usage: compare_ncu.py GPUTOOL TEST_SASS NCU_CSV PROFILE_DIR
  GPUTOOL      the gputool command (reads the profile)
  TEST_SASS    build/tests/unit/test_sass (its --class names opcodes' classes)
  NCU_CSV      ncu --metrics smsp__inst_executed.sum,sass__inst_executed_per_opcode
               --print-metric-instances details --csv PROGRAM
  PROFILE_DIR  the program's run under GPUTOOL_PC_SAMPLING

Per kernel (all launches and launch sites summed): executed instructions
and their share per class, from Nsight's counters and from gputool's
samples. Prints a table; exits 0 (a comparison, not a check)."""
import collections
import csv
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from gtrun import profiles  # noqa: E402

GPUTOOL, TEST_SASS, NCU, OUTDIR = sys.argv[1:5]


def ncu_counts():
    per = collections.defaultdict(collections.Counter)
    with open(NCU) as f:
        for r in csv.reader(line for line in f if line.startswith('"')):
            if len(r) < 15 or r[0] == "ID":
                continue
            k = r[4].split("(")[0].strip()
            if r[12] == "smsp__inst_executed.sum":
                per[k]["all"] += int(r[14].replace(",", ""))
            elif r[12] == "sass__inst_executed_per_opcode":
                m = re.search(r"\((.*)\)", r[14])
                for part in (m.group(1).split(";") if m else []):
                    op, v = part.rsplit(":", 1)
                    per[k]["op " + op.strip()] += int(v.replace(",", ""))
    ops = sorted({o[3:] for c in per.values() for o in c if o.startswith("op ")})
    cls = dict(line.split() for line in subprocess.run([TEST_SASS, "--class"] + ops, check=True,
                                                        capture_output=True, text=True).stdout.splitlines())
    out = {}
    for k, c in per.items():
        by = collections.Counter()
        for o, v in c.items():
            if o.startswith("op "):
                by[cls[o[3:]]] += v
        out[k] = (c["all"], by)
    return out


def gputool_counts():
    p = profiles(GPUTOOL, OUTDIR)[0]
    period = float(p.meta("pc_period_cycles") or 0)
    w = float(p.meta("pc_schedulers") or 4)
    # The metrics with a value: those of the classes that issued.
    names = [m["name"] for m in p.doc["metrics"] if m["name"].startswith("GPI_")]
    out = collections.defaultdict(lambda: [0.0, collections.Counter()])
    for ph in p.find("<gpu kernel>"):
        for kern in p.children.get(ph["id"], []):
            k = (kern.get("name") or "").split("(")[0].strip()
            s, lat = p.incl(kern, "GPC_SAMPLES"), p.incl(kern, "GPC_LATENCY")
            out[k][0] += (s - lat) * w * period
            for n in names:
                out[k][1][n[4:].lower()] += p.incl(kern, n)
    return out


def main():
    n, g = ncu_counts(), gputool_counts()
    print("%-14s %12s %12s %7s  %s" % ("kernel", "ncu instr", "gputool", "ratio", "class shares: ncu / gputool"))
    for k in sorted(n):
        if k not in g:
            continue
        total, by = n[k]
        est, mix = g[k]
        ms = sum(mix.values()) or 1
        shares = ", ".join("%s %.1f/%.1f%%" % (c, 100.0 * by[c] / total, 100.0 * mix[c] / ms)
                           for c in sorted(set(by) | set(mix), key=lambda c: -by[c])
                           if by[c] * 200 > total or mix[c] * 200 > ms)
        print("%-14s %12d %12.4g %7.3f  %s" % (k, total, est, est / total if total else 0, shares))


main()
