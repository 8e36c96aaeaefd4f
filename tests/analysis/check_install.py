#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`cmake --install`: what lands under the prefix, and that the installed
command works on its own: `gputool run` finds the installed library (also
after the prefix is moved), `gputool report` reads the run, `--help` works
on each subcommand, and nothing installed points back into the build tree.

Usage: check_install.py BUILD_DIR"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runenv import check, clean_env, failures  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
SPLIT = os.path.join(BUILD, "samples", "omp-host", "split")
def run(cmd, **extra):
    return subprocess.run(cmd, capture_output=True, text=True, env=clean_env(unset=("LD_LIBRARY_PATH",), **extra),
                          timeout=300)


def library_of(prefix):
    """The library the installed `gputool run` hands to the program."""
    p = run([os.path.join(prefix, "bin", "gputool"), "run", "-o", os.path.join(prefix, "envrun"), "--", "env"])
    env = dict(line.split("=", 1) for line in p.stdout.splitlines() if "=" in line)
    return p.returncode, env.get("OMP_TOOL_LIBRARIES")


def main():
    tmp = tempfile.mkdtemp(prefix="gt-install-")
    prefix = os.path.join(tmp, "prefix")
    p = subprocess.run(["cmake", "--install", BUILD, "--prefix", prefix], capture_output=True, text=True)
    check(p.returncode == 0, "cmake --install: %s" % p.stderr[-500:])
    libs = [os.path.join(d, "libgputool.so") for d in ("lib", "lib64", "lib/x86_64-linux-gnu")
            if os.path.exists(os.path.join(prefix, d, "libgputool.so"))]
    for f in ("bin/gputool", "share/man/man1/gputool.1", "share/doc/gputool/README.md",
              "share/doc/gputool/report.schema.json"):
        check(os.path.exists(os.path.join(prefix, f)), "not installed: %s" % f)
    check(len(libs) == 1, "libgputool.so installed in %s" % libs)
    man = open(os.path.join(prefix, "share/man/man1/gputool.1")).read()
    check(man.startswith(".TH GPUTOOL 1") and "--sample-hz" in man and "GPUTOOL_OUTPUT" in man,
          "the man page lacks the help text")

    # Nothing points into the build tree.
    if shutil.which("readelf"):
        for f in ["bin/gputool"] + libs:
            d = subprocess.run(["readelf", "-d", os.path.join(prefix, f)], capture_output=True, text=True).stdout
            check("RPATH" not in d and "RUNPATH" not in d, "%s has a run path: %s" % (f, d))

    gputool = os.path.join(prefix, "bin", "gputool")
    for sub in ("run", "report"):
        p = run([gputool, sub, "--help"])
        check(p.returncode == 0 and "options" in p.stdout, "gputool %s --help: %d" % (sub, p.returncode))

    code, lib = library_of(prefix)
    check(code == 0 and lib == os.path.realpath(os.path.join(prefix, libs[0] if libs else "lib")),
          "the installed gputool run hands over %r" % lib)
    if os.path.exists(SPLIT):
        d = os.path.join(tmp, "meas")
        p = run([gputool, "run", "-o", d, "--", SPLIT, "200000"], OMP_NUM_THREADS="2")
        check(p.returncode == 0, "installed gputool run: %d %r" % (p.returncode, p.stderr))
        p = run([gputool, "report", d])
        check(p.returncode == 0 and "compute (split.c:" in p.stdout, "installed gputool report: %r" % p.stderr)

    # A moved prefix still finds its own library.
    moved = os.path.join(tmp, "moved")
    shutil.move(prefix, moved)
    code, lib = library_of(moved)
    check(code == 0 and lib and lib.startswith(os.path.realpath(moved) + "/"),
          "after a move, gputool run hands over %r" % lib)

    if failures:
        print("check_install: %d failures (files in %s)" % (len(failures), tmp))
        sys.exit(1)
    shutil.rmtree(tmp)
    print("check_install: ok")


main()
