# SPDX-License-Identifier: MIT
"""OpenACC through the profiling interface (ACC_PROFLIB), end to end: the
gcc-built sample runs under libgputool.so; constructs appear at their call
sites with exact counts, and the program's output is unchanged.
Usage: test_openacc.py BUILD_DIR"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from gtrun import check, main, profiles, run  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
LIB = os.path.join(BUILD, "libgputool.so")
GPUTOOL = os.path.join(BUILD, "gputool")
EXE = os.path.join(BUILD, "samples", "openacc", "sites")
# Sanitizer builds: the sample (built by gcc) is not instrumented, the tool
# is; the sanitizer runtime comes preloaded.
BASE = {"LD_PRELOAD": os.environ["GT_TARGET_PRELOAD"]} if os.environ.get("GT_TARGET_PRELOAD") else {}


def run_acc(env=None):
    import tempfile
    outdir = tempfile.mkdtemp(prefix="gputool-acc-")
    env = dict(BASE, **(env or {}))
    code0, out0, _ = run([EXE], env=env)
    code1, out1, err1 = run([EXE], env=dict(env, ACC_PROFLIB=LIB, GPUTOOL_OUTPUT=outdir))
    check(code0 == code1 == 0, "exit codes %d %d" % (code0, code1))
    check(out0 == out1, "stdout changed: %r vs %r" % (out0, out1))
    ps = profiles(GPUTOOL, outdir)
    check(len(ps) == 1, "expected one profile, found %d" % len(ps))
    return ps[0], err1


def constructs(p, name, caller):
    return [n for n in p.find(name) if caller in " ".join(p.names(n))]


def test_sites_and_counts():
    p, err = run_acc()
    check(err.count("gputool: report") == 1, "stderr: %r" % err)
    expect = [("<acc compute>", "saxpy", 30), ("<acc compute>", "scale", 10),
              ("<acc enter data>", "stage", 10), ("<acc update>", "stage", 10),
              ("<acc exit data>", "stage", 10)]
    for name, caller, count in expect:
        ns = constructs(p, name, caller)
        check(len(ns) == 1, "%s under %s: %d nodes" % (name, caller, len(ns)))
        got = p.excl(ns[0], "ACC_COUNT")
        check(got == count, "%s under %s: ACC_COUNT %s, expected %d" % (name, caller, got, count))
        names = p.names(ns[0])
        check(names[0] == "main", "%s context starts at %s" % (name, names[0]))
    # Both compute sites are distinct contexts, each under its own caller.
    a, b = constructs(p, "<acc compute>", "saxpy")[0], constructs(p, "<acc compute>", "scale")[0]
    check(a["id"] != b["id"], "the two sites share a node")
    for n in p.doc["nodes"]:
        if n.get("kind") == "frame" and n.get("module") is not None:
            m = os.path.basename(p.doc["modules"][n["module"]])
            check(not m.startswith("libgomp") and not m.startswith("libgputool"),
                  "runtime frame %s (%s)" % (n.get("name"), m))
    check(p.meta("acc_device"), "no device fact")


def test_disabled():
    import tempfile
    outdir = tempfile.mkdtemp(prefix="gputool-acc-")
    code, out, err = run([EXE], env=dict(BASE, ACC_PROFLIB=LIB, GPUTOOL_OUTPUT=outdir, GPUTOOL_DISABLE="1"))
    check(code == 0 and err == "" and os.listdir(outdir) == [], "GPUTOOL_DISABLE=1 still measured")


main([("constructs at their call sites, exact counts", test_sites_and_counts),
      ("GPUTOOL_DISABLE=1", test_disabled)])
