# SPDX-License-Identifier: MIT
"""What the report checks on replayed recordings share: a recording through
test_cupti into a profile (GT_REPLAY_PROFILE), `gputool report`'s JSON and
text of it, a metric's inclusive sum at a node, and the checks' tally."""
import json
import os
import subprocess
import sys

bad = []


def check(cond, what):
    print("  %-78s %s" % (what, "ok" if cond else "FAIL"))
    if not cond:
        bad.append(what)


def replay_report(test_cupti, gputool, args, outdir, name):
    """test_cupti ARGS writing outdir/NAME.gtprof; its report as (JSON, text)."""
    os.makedirs(outdir, exist_ok=True)
    prof = os.path.join(outdir, name + ".gtprof")
    subprocess.run([test_cupti] + args, env=dict(os.environ, GT_REPLAY_PROFILE=prof), check=True,
                   stdout=subprocess.DEVNULL)
    doc = json.loads(subprocess.run([gputool, "report", prof, "--format", "json"], check=True, capture_output=True,
                                    text=True).stdout)
    text = subprocess.run([gputool, "report", prof], check=True, capture_output=True, text=True).stdout
    return doc, text


def incl(n, m):
    return n.get("metrics", {}).get(m, {}).get("incl", {}).get("sum", 0)


def kernel_shares(k):
    """A kernel context's S, issued samples, W_R and waiting share."""
    S, iss = incl(k, "GPC_SAMPLES"), incl(k, "GPC_ISSUED")
    return S, iss, (S - incl(k, "GPC_LATENCY")) / S, 1 - (iss + incl(k, "GPC_NOT_SELECTED")) / S


def first_model(wr, waiting, f, cut=0.0):
    """docs/ADVICE.md's first model: the kernel's speedup T / T'."""
    return 1 / (wr * (1 - cut) + (1 - wr) * (waiting - f) / waiting)


def unroll_model(doc, a):
    """The loop unrolling advice's estimate: f = the loop's GPO_UNROLL / S."""
    nodes = {n["id"]: n for n in doc["nodes"]}
    k, loop = nodes[a["node"]], nodes[a["line_node"]]
    while not loop.get("name", "").startswith("loop at ") and loop["id"] != k["id"]:
        loop = nodes[loop["parent"]]
    S, iss, wr, waiting = kernel_shares(k)
    return first_model(wr, waiting, incl(loop, "GPO_UNROLL") / S), loop["id"] != k["id"]


def inline_model(doc, a):
    """The inlining advice's estimate (docs/ADVICE.md), and the waiting
    samples of each function called at the advice's line: f = (B + 3/4 (W -
    B)) / S for a call in a loop, (B + min(W - B, issued)) / S elsewhere (W
    the function's waiting samples, B those waiting for a branch target), c
    the call's own branches and moves (at its line, and in the function
    outside its loops) over the kernel's issued samples."""
    nodes = {n["id"]: n for n in doc["nodes"]}
    children = {}
    for n in doc["nodes"]:
        children.setdefault(n.get("parent"), []).append(n)
    k = nodes[a["node"]]
    S, iss, wr, waiting = kernel_shares(k)
    callees = children.get(a["line_node"], [])
    w = [incl(n, "GPC_SAMPLES") - incl(n, "GPC_ISSUED") - incl(n, "GPC_NOT_SELECTED") for n in callees]
    if a["samples"] not in w:
        return 0, w
    fn = callees[w.index(a["samples"])]
    br = min(incl(fn, "GPS_BRANCH"), a["samples"])
    up, in_loop = nodes[a["line_node"]], False
    while up["id"] != k["id"]:
        in_loop = in_loop or up.get("name", "").startswith("loop at ")
        up = nodes[up["parent"]]
    rest = a["samples"] - br
    f = (br + (0.75 * rest if in_loop else min(rest, iss))) / S

    def mine(n):
        return sum(n.get("metrics", {}).get(m, {}).get("excl", {}).get("sum", 0) for m in ("GPI_CONTROL", "GPI_OTHER"))

    def own(n):
        """GPI_CONTROL + GPI_OTHER of n's subtree, its loops left out."""
        if n["id"] != fn["id"] and n.get("name", "").startswith("loop at "):
            return 0
        return mine(n) + sum(own(c) for c in children.get(n["id"], []))
    cost = mine(nodes[a["line_node"]]) + own(fn)
    return first_model(wr, waiting, f, cost / iss if iss else 0), w


def finish():
    print("%d failures" % len(bad))
    sys.exit(1 if bad else 0)
