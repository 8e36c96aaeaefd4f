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


def finish():
    print("%d failures" % len(bad))
    sys.exit(1 if bad else 0)
