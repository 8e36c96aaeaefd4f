# SPDX-License-Identifier: MIT
"""One report: the report a process writes at exit is, byte for byte, what
`gputool report FILE` prints for the profile it wrote beside it, and
`gputool report DIR` of the one-process run prints the same (its first
line names the directory instead). Over an OpenMP host sample and a
host-offload sample with device operations and blame.
Usage: test_report_layout.py BUILD_DIR"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
from gtrun import check, main, run, run_gputool  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
GPUTOOL = os.path.join(BUILD, "gputool")
ENV = {"OMP_NUM_THREADS": "2"}
if os.environ.get("GT_TARGET_PRELOAD"):
    ENV["LD_PRELOAD"] = os.environ["GT_TARGET_PRELOAD"]
# Lines that open a section of the exit report: a capital at column 0.
TITLE = re.compile(r"^([A-Z][A-Za-z/ -]+?)(?: \(|$)")


def titles(text):
    return [m.group(1) for m in map(TITLE.match, text.splitlines()) if m]


def one(exe, args=(), env=None):
    outdir, _ = run_gputool(GPUTOOL, exe, args, env=env or ENV)
    files = sorted(os.listdir(outdir))
    prof = [f for f in files if f.endswith(".gtprof")]
    txt = [f for f in files if f.endswith(".txt")]
    check(len(prof) == 1 and len(txt) == 1, "files in %s: %s" % (outdir, files))
    with open(os.path.join(outdir, txt[0])) as f:
        exit_report = f.read()
    code, by_file, err = run([GPUTOOL, "report", os.path.join(outdir, prof[0])])
    check(code == 0, "report FILE: %s" % err)
    code, by_dir, err = run([GPUTOOL, "report", outdir])
    check(code == 0, "report DIR: %s" % err)
    prof_path = os.path.join(outdir, prof[0])
    check(exit_report.splitlines()[0] == "gputool report: " + prof_path,
          "the exit report's first line: %r" % exit_report.splitlines()[0])
    check(exit_report == by_file,
          "the exit report and report FILE differ:\n%s\n----\n%s" % (exit_report, by_file))
    # The first line names the path given; the rest is the same.
    check(by_file.splitlines()[1:] == by_dir.splitlines()[1:],
          "report FILE and report DIR differ:\n%s\n----\n%s" % (by_file, by_dir))
    return titles(exit_report)


def test_host():
    want = one(os.path.join(BUILD, "samples", "omp-host", "split"))
    for t in ("OpenMP parallel regions", "CPU time by calling context", "Waits", "Top-down view"):
        check(t in want, "the exit report lacks %r: %s" % (t, want))


def test_offload():
    want = one(os.path.join(BUILD, "samples", "omp-target", "blame"))
    # Offloaded to the host device (no GPU here), its operations are the
    # host's and no device waited for the CPU: no blame section.
    on_host = "Offloaded operations" in want
    for t in ("Offloaded operations",) if on_host else ("GPU operations", "Blame shifting"):
        check(t in want, "the exit report lacks %r: %s" % (t, want))
    if on_host:
        check("GPU operations" not in want and "Blame shifting" not in want,
              "GPU sections in a host-offload report: %s" % want)


main([("OpenMP host sample", test_host), ("OpenMP host offload with blame", test_offload)])
