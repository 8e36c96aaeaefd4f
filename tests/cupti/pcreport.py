# SPDX-License-Identifier: MIT
"""What the report checks on replayed recordings share: a recording through
test_cupti into a profile (GT_REPLAY_PROFILE), `gputool report`'s JSON and
text of it, a metric's inclusive sum at a node, and the checks' tally."""
import json
import re
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from advice_model import stall_ratio  # noqa: E402

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
    return 1 / stall_ratio(wr, waiting, f, cut)


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


def math_model(doc, a):
    """f = the kernel's GPB_CONVERT samples outside the math library's
    subroutines and the subroutines' waiting samples; c = the subroutines'
    issued samples and the idioms' (GPO_IDIOM_ISSUED)."""
    nodes = {n["id"]: n for n in doc["nodes"]}
    k = nodes[a["node"]]
    S, iss, wr, waiting = kernel_shares(k)

    def chain(n):
        while n.get("parent") is not None and n["id"] != k["id"]:
            yield n
            n = nodes[n["parent"]]
    mine = [n for n in doc["nodes"] if n["id"] != k["id"] and nodes.get(n.get("parent")) is not None and
            k in [nodes[x["parent"]] for x in chain(n)]]
    subs = [n for n in mine if re.match(r"(__cuda_|__internal_)", n.get("name") or "")
            and not [x for x in chain(nodes[n["parent"]]) if re.match(r"(__cuda_|__internal_)", x.get("name") or "")]]
    inside = {x["id"] for s in subs for x in mine if s in list(chain(x))}
    conv = sum(n.get("metrics", {}).get("GPB_CONVERT", {}).get("excl", {}).get("sum", 0)
               for n in mine if n["id"] not in inside)
    sub_wait = sum(incl(s, "GPC_SAMPLES") - incl(s, "GPC_ISSUED") - incl(s, "GPC_NOT_SELECTED") for s in subs)
    sub_iss = sum(incl(s, "GPC_ISSUED") for s in subs)
    idiom_iss = sum(n.get("metrics", {}).get("GPO_IDIOM_ISSUED", {}).get("excl", {}).get("sum", 0)
                    for n in mine if n["id"] not in inside)
    return first_model(wr, waiting, (conv + sub_wait) / S, (sub_iss + idiom_iss) / iss if iss else 0)


def finish():
    print("%d failures" % len(bad))
    sys.exit(1 if bad else 0)
