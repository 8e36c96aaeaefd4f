#!/usr/bin/env python3
"""Checks the gputool command on profiles written by test_profile.

Usage: check_cli.py GPUTOOL_BINARY TEST_PROFILE_BINARY

Exit status and messages of `gputool report` on a file, a directory with
several profiles, corrupt and missing files, and usage errors; `help env`
and `--version`.
"""
import json
import os
import subprocess
import sys
import tempfile

GPUTOOL, TEST_PROFILE = sys.argv[1], sys.argv[2]
failures = 0


def run(*args):
    p = subprocess.run([GPUTOOL] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def expect(args, rc, out=(), err=(), no_out=()):
    global failures
    code, so, se = run(*args)
    problems = []
    if code != rc:
        problems.append("exit %d, wanted %d" % (code, rc))
    problems += ["stdout lacks %r" % s for s in out if s not in so]
    problems += ["stderr lacks %r" % s for s in err if s not in se]
    problems += ["stdout has %r" % s for s in no_out if s in so]
    if problems:
        failures += 1
        print("FAIL gputool %s: %s\n--- stdout\n%s--- stderr\n%s" %
              (" ".join(args), "; ".join(problems), so, se))
    return so


with tempfile.TemporaryDirectory() as tmp:
    one = os.path.join(tmp, "one")
    two = os.path.join(tmp, "two")
    empty = os.path.join(tmp, "empty")
    for d in (one, two, empty):
        os.mkdir(d)
    a = os.path.join(one, "gputool-app-1.gtprof")
    subprocess.run([TEST_PROFILE, "emit-binary", a], check=True)
    data = open(a, "rb").read()
    for name in ("app-1.gtprof", "app-2.gtprof"):
        open(os.path.join(two, name), "wb").write(data)
    open(os.path.join(two, "notes.txt"), "w").write("not a profile\n")
    bad = os.path.join(tmp, "bad.gtprof")
    open(bad, "wb").write(data[:len(data) // 2])
    junk = os.path.join(tmp, "junk.gtprof")
    open(junk, "wb").write(b"hello, world\n")

    # Text, a file and a directory holding one profile.
    expect(["report", a], 0, out=["OpenMP parallel regions", "CPU time by calling context",
                                  "Waits", "main (app.c:50) > run_a (app.c:30)"])
    expect(["report", one], 0, out=["processes    1", "Top-down view"])
    expect(["report", "--top", "1", a], 0, out=["(1 of 3", "by function (1 of 5)"])
    expect(["report", a, "--top=2"], 0, out=["(2 of 3"])

    # JSON, to stdout and to a file.
    so = expect(["report", "--format", "json", a], 0)
    try:
        doc = json.loads(so)
        if doc.get("format") != "gputool-report" or doc["run"]["processes"] != 1:
            raise ValueError("format")
    except ValueError as e:
        failures += 1
        print("FAIL: report --format json: %s" % e)
    out = os.path.join(tmp, "out.json")
    expect(["report", a, "--format=json", "-o", out], 0)
    try:
        json.load(open(out))
    except (OSError, ValueError) as e:
        failures += 1
        print("FAIL: -o FILE: %s" % e)

    # Several profiles: merged (tests/analysis checks the merge itself).
    expect(["report", two], 0, out=["processes    2", "Top-down view"])
    so = expect(["report", "--format", "json", two], 0)
    try:
        docs = json.loads(so)
        if not (docs.get("format") == "gputool-report" and docs["run"]["processes"] == 2):
            raise ValueError("not a report of 2 processes")
    except ValueError as e:
        failures += 1
        print("FAIL: report --format json DIR: %s" % e)

    # Unreadable and corrupt input: exit 1 and one clear line, never a crash.
    expect(["report", bad], 1, err=["not a valid profile", "truncated"])
    expect(["report", junk], 1, err=["not a valid profile", "bad magic"])
    expect(["report", os.path.join(tmp, "missing.gtprof")], 1, err=["cannot open"])
    expect(["report", empty], 1, err=["no *.gtprof files"])
    expect(["report", a, "-o", os.path.join(tmp, "no", "such", "dir")], 1, err=["cannot write"])
    os.rename(bad, os.path.join(two, "app-3.gtprof"))
    expect(["report", two], 1, out=["processes    2", "left out"], err=["not a valid profile"])

    # Usage errors: exit 2.
    expect([], 2, err=["usage"])
    expect(["frobnicate"], 2, err=["unknown command"])
    expect(["report"], 2, err=["needs a PATH"])
    expect(["report", a, a], 2, err=["one PATH"])
    expect(["report", a, "--format", "xml"], 2, err=["unknown format"])
    expect(["report", a, "--format"], 2, err=["--format needs"])
    expect(["report", a, "--top", "0"], 2, err=["--top"])
    expect(["report", a, "--top", "ten"], 2, err=["--top"])
    expect(["report", a, "--bogus"], 2, err=["unknown option"])
    expect(["report", a, "-o"], 2, err=["-o needs"])
    expect(["help", "nothing"], 2, err=["no help"])

    # Help and version.
    expect(["help"], 0, out=["report PATH", "help [run|report|env]"])
    expect(["--help"], 0, out=["report PATH"])
    expect(["help", "env"], 0, out=["GPUTOOL_SAMPLE_HZ", "GPUTOOL_OUTPUT"])
    expect(["run", "--help"], 0, out=["usage: gputool run", "--sample-hz"])
    expect(["run", "-h"], 0, out=["usage: gputool run"])
    # getopt_long: --help wherever options go, -oFILE, unambiguous prefixes;
    # run's options end at the program (its own --help is the program's).
    expect(["report", a, "--help"], 0, out=["report options", "--format F"])
    expect(["report", "--form=json", "-o" + out, a], 0)
    expect(["report", a, "--view", "sideways"], 2, err=["unknown view"])
    expect(["run", "--sample", "gpu", "--", "true"], 2, err=["--sample takes cpu, wall or cpu,wall"])
    expect(["run", "--sample-hz"], 2, err=["--sample-hz needs a value"])
    expect(["run", "-o", os.path.join(tmp, "h"), "--sample-hz", "0", "--", "sh", "-c", "echo got $0", "--help"], 0,
           out=["got --help"], no_out=["usage: gputool"])
    expect(["report", "--help"], 0, out=["report PATH"])
    expect(["--version"], 0, out=["gputool "])

print("check_cli: %s" % ("ok" if not failures else "%d failures" % failures))
sys.exit(1 if failures else 0)
