#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A short libFuzzer run of fuzz_report from a seed corpus of real profiles.

Usage: run_fuzz.py FUZZ_REPORT BUILD_DIR SECONDS

Seeds: a profile the library writes for samples/omp-host/split, the sample
profile of tests/profile, synthetic profiles with GPU metrics and a trace.
Fails on any crash, leak, timeout or input rejected without a reason; the
input that did it is kept and named."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gtfiles  # noqa: E402

FUZZ, BUILD, SECONDS = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), int(sys.argv[3])


def seeds(d):
    lib = os.path.join(BUILD, "libgputool.so")
    split = os.path.join(BUILD, "samples", "omp-host", "split")
    if os.path.exists(lib) and os.path.exists(split):
        out = tempfile.mkdtemp(prefix="gt-fuzz-real-")
        env = dict(os.environ, OMP_TOOL_LIBRARIES=lib, GPUTOOL_OUTPUT=out, OMP_NUM_THREADS="2",
                   GPUTOOL_SAMPLE_HZ="2000")
        subprocess.run([split, "300000"], env=env, capture_output=True, timeout=120)
        for f in os.listdir(out):
            if f.endswith(".gtprof"):
                shutil.copy(os.path.join(out, f), os.path.join(d, "real-" + f))
        shutil.rmtree(out, ignore_errors=True)
    tp = os.path.join(BUILD, "tests", "profile", "test_profile")
    if os.path.exists(tp):
        subprocess.run([tp, "emit-binary", os.path.join(d, "sample.gtprof")], capture_output=True)
    p = gtfiles.Profile({"rank": "1", "pid": "7"}, threads=2)
    m = p.frame(0, "main", line=10)
    k = p.ph(p.frame(m, "solve", line=20), "<gpu kernel>")
    p.value(p.node(k, gtfiles.NAME, "axpy"), 0, "GKER", 5000)
    p.value(m, 1, "CPUTIME", 7000)
    p.value(p.ph(p.frame(m, "copy", line=30), "<gpu copy h2d>"), 0, "GXCOPY_H2D", 300)
    p.write(os.path.join(d, "gpu.gtprof"))
    t = gtfiles.Trace()
    s = t.strs("main thread", "axpy")
    t.tracks([(1, gtfiles.CPU, 0, 100, s[0]), (2, gtfiles.GPU, 0, 7, None)])
    t.events(1, [(1000, 500, "api", None, 2, 9)])
    t.events(2, [(1200, 800, "kernel", s[1], 3, 9)])
    t.write(os.path.join(d, "trace.gttrace"))
    return len(os.listdir(d))


def main():
    work = tempfile.mkdtemp(prefix="gt-fuzz-")
    seed_dir, corpus = os.path.join(work, "seeds"), os.path.join(work, "corpus")
    os.mkdir(seed_dir)
    os.mkdir(corpus)
    n = seeds(seed_dir)
    cmd = [FUZZ, "-max_total_time=%d" % SECONDS, "-timeout=10", "-rss_limit_mb=2048", "-max_len=65536",
           "-print_final_stats=1", "-artifact_prefix=%s/" % work, corpus, seed_dir]
    print("fuzzing %d s from %d seeds: %s" % (SECONDS, n, " ".join(cmd)))
    p = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=SECONDS + 120,
                       env=dict(os.environ, ASAN_OPTIONS="detect_leaks=1"))
    tail = "\n".join(p.stderr.splitlines()[-25:])
    if p.returncode != 0:
        found = [f for f in os.listdir(work) if f.split("-")[0] in ("crash", "leak", "timeout", "oom")]
        print("FAIL fuzz_report exited %d; inputs kept in %s: %s\n%s" % (p.returncode, work, found, tail))
        sys.exit(1)
    print(tail)
    shutil.rmtree(work, ignore_errors=True)
    print("ok   fuzz")


main()
