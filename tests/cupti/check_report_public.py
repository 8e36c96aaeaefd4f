# SPDX-License-Identifier: MIT
"""The kernel advice on a replayed run of a public program (not written
here): the recording (activity, PC samples, nvdisasm's text) goes through
the backend's real code (test_cupti replay-advice) into a profile, and
`gputool report` must give what data/public-advice.json expects for it:
each listed kernel's item of the listed kind at the listed line, among that
kernel's first three items, with the estimated speedup (to 0.001) the
models gave when the file was written, and no item of the kinds the file
says must not appear. The estimates are what docs/ADVICE.md's models give
from the profile's metrics; a change to a model shows here as a changed
number, to be explained against the measured speedup in
docs/GPU-VALIDATION.md ("Published fixes, measured").

Usage: check_report_public.py TEST_CUPTI GPUTOOL RECORDING EXPECTATIONS OUTDIR"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pcreport import check, finish, replay_report  # noqa: E402

TEST_CUPTI, GPUTOOL, REC, EXPECT, OUT = sys.argv[1:6]
name = re.sub(r"\.rec$", "", os.path.basename(REC))
want = json.load(open(EXPECT))[name]
# The runs sampled at CUPTI's default period: 2^11 cycles.
doc, text = replay_report(TEST_CUPTI, GPUTOOL, ["replay-advice", REC, "11"], OUT, name)


def of_kernel(kernel):
    """The kernel's GPU items, in the report's order (replays keep CUPTI's
    mangled names: _Z<len><name>... or the plain name of extern "C")."""
    pat = re.compile(r"^(_Z%d%s|%s\()" % (len(kernel), re.escape(kernel), re.escape(kernel)))
    return [a for a in doc["advice"] if a["kind"].startswith("gpu-") and pat.match(a["name"])]


for e in want["expect"]:
    items = of_kernel(e["kernel"])
    at = [i for i, a in enumerate(items) if a["kind"] == e["kind"]]
    got = items[at[0]] if at else None
    check(got is not None and at[0] < 3,
          "%s: %s among its first 3 items (%s)" % (e["kernel"], e["kind"], [a["kind"] for a in items]))
    if got is None:
        continue
    check(got.get("line") == e["line"], "%s: %s at %s (%s)" % (e["kernel"], e["kind"], e["line"], got.get("line")))
    check(abs(got["speedup"] - e["speedup"]) < 0.0005,
          "%s: %s estimated %.3fx (%.3fx)" % (e["kernel"], e["kind"], e["speedup"], got["speedup"]))
for e in want.get("absent", []):
    items = of_kernel(e["kernel"])
    check(not [a for a in items if a["kind"] == e["kind"]],
          "%s: no %s item (%s)" % (e["kernel"], e["kind"], [a["kind"] for a in items]))
finish()
