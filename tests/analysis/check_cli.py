#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The gputool command's small promises: each subcommand's own help, the
formats the usage, the help and docs/REPORT.md list (one list), no -o file
left by a report that failed, `gputool report` on a folder of run
directories naming them, a program `gputool run` did not measure said so
(its empty directory removed), pprof's main mapping named after the program.

Usage: check_cli.py BUILD_DIR SOURCE_DIR"""
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runenv import check, clean_env, failures  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
SOURCE = os.path.abspath(sys.argv[2])
GPUTOOL = os.path.join(BUILD, "gputool")
SPLIT = os.path.join(BUILD, "samples", "omp-host", "split")


def gt(*args, cwd=None, env=None):
    return subprocess.run([GPUTOOL] + list(args), capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def formats_of(text):
    m = re.search(r"--format ([a-z|]+)\]", text)
    return m.group(1).split("|") if m else None


def main():
    tmp = os.path.realpath(tempfile.mkdtemp(prefix="gt-cli-"))

    # Each subcommand's help is its own.
    for cmd in ("run", "report"):
        p = gt(cmd, "--help")
        check(p.returncode == 0 and p.stdout.startswith("usage: gputool %s " % cmd) and "commands:" not in p.stdout,
              "gputool %s --help: %r" % (cmd, p.stdout[:200]))
        check(p.stdout == gt("help", cmd).stdout, "gputool help %s differs from gputool %s --help" % (cmd, cmd))

    # One list of formats: the usage, the help, the error and the docs.
    usage = formats_of(gt("help", "report").stdout)
    err = gt("report", tmp, "--format", "nope").stderr
    m = re.search(r"unknown format 'nope' \((.*)\)", err)
    accepted = m and re.split(r", | or ", m.group(1))
    with open(os.path.join(SOURCE, "docs", "REPORT.md")) as f:
        doc = f.read()
    doc_usage = formats_of(doc.replace("\n", " "))
    row = re.search(r"^\| `--format` \|(.*)\|$", doc, re.M)
    doc_row = row and re.findall(r"`([a-z]+)`", row.group(1))
    check(usage and usage == accepted == doc_usage == doc_row,
          "formats: help %s, accepted %s, REPORT.md usage %s, table %s" % (usage, accepted, doc_usage, doc_row))

    if os.path.exists(SPLIT):
        env = clean_env(OMP_NUM_THREADS="2")
        p = gt("run", "-o", "runs/a", "--", SPLIT, "200000", cwd=tmp, env=env)
        check(p.returncode == 0, "split: %s" % p.stderr)
        run = os.path.join(tmp, "runs", "a")

        # A failed report leaves no -o file (no trace: chrome fails), and
        # keeps a file of that name from before.
        out = os.path.join(tmp, "f.json")
        p = gt("report", run, "--format", "chrome", "-o", out)
        check(p.returncode != 0 and not os.path.exists(out), "failed chrome -o: %d, file %s" %
              (p.returncode, os.path.exists(out)))
        with open(out, "w") as f:
            f.write("old")
        gt("report", run, "--format", "chrome", "-o", out)
        check(open(out).read() == "old", "a failed report replaced the file before it")
        check(not [f for f in os.listdir(tmp) if f.startswith(".f.json")], "temporary files left: %s" % os.listdir(tmp))
        p = gt("report", run, "--format", "json", "-o", out)
        check(p.returncode == 0 and open(out).read().startswith("{") and oct(os.stat(out).st_mode & 0o777) != "0o600",
              "json -o: %s" % p.stderr)

        # pprof: the first mapping (pprof's main binary) is the program.
        pb = os.path.join(tmp, "p.pb.gz")
        p = gt("report", run, "--format", "pprof", "-o", pb)
        if check(p.returncode == 0, "pprof: %s" % p.stderr):
            data = gzip.open(pb).read()
            # Mapping file names enter the string table in the mappings'
            # order, after the metrics' names.
            names = re.findall(rb"[\x20-\x7e]{3,}", data)
            mods = [n.decode() for n in names if n.endswith(b".so") or b".so." in n or n.endswith(b"/split")]
            check(mods and mods[0].endswith("/split"), "pprof's first module string: %s" % mods[:3])
            if shutil.which("go"):
                t = subprocess.run(["go", "tool", "pprof", "-raw", pb], capture_output=True, text=True)
                maps = re.findall(r"^\s*\d+: 0x[0-9a-fx/]+ (\S+)", t.stdout.split("Mappings", 1)[-1], re.M)
                check(maps and maps[0].endswith("/split"), "pprof mappings: %s" % maps[:3])

        # A folder of run directories: report names them.
        p = gt("report", os.path.join(tmp, "runs"))
        check(p.returncode != 0 and "gputool report %s" % run in p.stderr and "  %s\n" % run in p.stderr,
              "report above run directories: %r" % p.stderr)

    # A program not measured: said so, its empty directory removed. A
    # sanitizer build is not preloaded into an uninstrumented program
    # (check_run.py), so there the program is not measured for that reason.
    with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
        cache = f.read()
    if "GT_SANITIZE:BOOL=ON" not in cache and "GT_TSAN:BOOL=ON" not in cache:
        p = gt("run", "-o", "empty", "--sample-hz", "1", "--", "true", cwd=tmp, env=clean_env())
        check(p.returncode == 0 and "true was not measured" in p.stderr and
              "removed the empty directory %s/empty" % tmp in p.stderr and
              not os.path.exists(os.path.join(tmp, "empty")),
              "an unmeasured program: %r, directory %s" % (p.stderr, os.path.exists(os.path.join(tmp, "empty"))))

    if failures:
        print("check_cli: %d failures (files in %s)" % (len(failures), tmp))
        sys.exit(1)
    shutil.rmtree(tmp)
    print("check_cli: ok")


main()
