#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`gputool run`: the environment it gives the program, the output
directory, and the program's exit status and signals passed through.

Usage: check_run.py BUILD_DIR"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runenv import TOOL_VARS, check, clean_env, failures, sanitized  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
GPUTOOL = os.path.join(BUILD, "gputool")
LIB = os.path.realpath(os.path.join(BUILD, "libgputool.so"))
SPLIT = os.path.join(BUILD, "samples", "omp-host", "split")


SANITIZED = sanitized(BUILD)


def run(args, env, cwd):
    p = subprocess.run([GPUTOOL, "run"] + args, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
    return p.returncode, p.stdout, p.stderr


def env_of(args, cwd, **extra):
    """env's environment under gputool run, and the launcher's notes (the
    line of the preloaded library, should env have used a sampling period
    of CPU and so written a profile, left out)."""
    code, out, err = run(args + ["--", "env"], clean_env(**extra), cwd)
    check(code == 0, "gputool run %s -- env: exit %d: %s" % (args, code, err))
    err = "".join(l for l in err.splitlines(True)
                  if not l.startswith("gputool: report ") and " was not measured (" not in l)
    return dict(l.split("=", 1) for l in out.splitlines() if "=" in l), err


def preloaded(env, user=None):
    """LD_PRELOAD as gputool run should leave it: the library joined to the
    user's list, or (a sanitizer build, which env cannot load) the user's."""
    if SANITIZED:
        return env.get("LD_PRELOAD") == user and env.get("GPUTOOL_PRELOAD") is None
    return env.get("GPUTOOL_PRELOAD") == "1" and env.get("LD_PRELOAD") == (LIB + ":" + user if user else LIB)


def report(d, *args):
    return subprocess.run([GPUTOOL, "report", d] + list(args), capture_output=True, text=True)


def profiles(d):
    return sorted(f for f in os.listdir(d) if f.endswith(".gtprof"))


def one_run_one_directory(tmp):
    """A directory holds one run: gputool run refuses one holding another
    run's profiles (the ranks of one job share theirs), the report refuses
    profiles of two runs, and --force overrides both."""
    args = ["--", SPLIT, "200000"]
    env = clean_env(OMP_NUM_THREADS="2")
    d = os.path.join(tmp, "again")
    code, _, _ = run(["-o", d] + args, env, tmp)
    check(code == 0 and len(profiles(d)) == 1, "first run: %d %s" % (code, os.listdir(d)))
    code, out, err = run(["-o", d] + args, env, tmp)
    check(code == 125 and "already holds the profiles of another run (1 .gtprof file)" in err and not out,
          "a second run into the directory: %d %r" % (code, err))
    check(len(profiles(d)) == 1, "the refused run wrote %s" % profiles(d))
    code, _, err = run(["-o", d, "--force"] + args, env, tmp)
    check(code == 0 and len(profiles(d)) == 2, "--force: %d %r %s" % (code, err, profiles(d)))
    r = report(d)
    check(r.returncode == 2 and "more than one run wrote here" in r.stderr and not r.stdout,
          "the report of two runs: %d %r" % (r.returncode, r.stderr))
    r = report(d, "--force")
    check(r.returncode == 0 and "processes    2" in r.stdout, "report --force: %d %r" % (r.returncode, r.stderr))

    # A program that runs a measured helper (as LLVM's JIT runs ptxas): the
    # helper's profile names its parent, and the report takes both as one run.
    d = os.path.join(tmp, "helper")
    parent = ("import subprocess, sys, time\nt = time.time()\nwhile time.time() - t < 0.3: pass\n"
              "sys.exit(subprocess.run([%r, '200000']).returncode)" % SPLIT)
    code, _, err = run(["-o", d, "--", sys.executable, "-c", parent], env, tmp)
    check(code == 0, "a program with a helper: %d %r" % (code, err))
    r = report(d)
    want = "processes    1" if SANITIZED else "processes    2"
    check(r.returncode == 0 and want in r.stdout, "the report of a program and its helper: %d %r %s" %
          (r.returncode, r.stderr, profiles(d)))

    # The ranks of one job share the directory; another job is refused.
    d = os.path.join(tmp, "job")
    for rank in ("0", "1"):
        code, _, err = run(["-o", d] + args, clean_env(OMP_NUM_THREADS="2", OMPI_MCA_ess_base_jobid="77",
                                                        OMPI_COMM_WORLD_RANK=rank, OMPI_COMM_WORLD_SIZE="2"), tmp)
        check(code == 0, "rank %s of job 77: %d %r" % (rank, code, err))
    code, _, err = run(["-o", d] + args, clean_env(OMP_NUM_THREADS="2", OMPI_MCA_ess_base_jobid="78",
                                                    OMPI_COMM_WORLD_RANK="0", OMPI_COMM_WORLD_SIZE="2"), tmp)
    check(code == 125 and "(2 .gtprof files)" in err, "job 78 into job 77's directory: %d %r" % (code, err))
    r = report(d)
    check(r.returncode == 0 and "processes    2 (ranks 0-1)" in r.stdout, "job 77's report: %r" % r.stderr)

    # Two programs as ranks of one job (an MPMD job): one run, its id the
    # job's. The same profiles without a run id (the library alone), where
    # only the programs tell, are said to be of different programs.
    progs = (("0", SPLIT), ("1", os.path.join(BUILD, "samples", "omp-host", "nested")))
    d = os.path.join(tmp, "programs")
    for rank, prog in progs:
        code, _, err = run(["-o", d, "--", prog], clean_env(OMP_NUM_THREADS="2", OMPI_MCA_ess_base_jobid="79",
                                                           OMPI_COMM_WORLD_RANK=rank, OMPI_COMM_WORLD_SIZE="2"),
                           tmp)
        check(code == 0, "rank %s (%s): %d %r" % (rank, prog, code, err))
    r = report(d)
    check(r.returncode == 0 and "programs     split, nested" in r.stdout and "processes    2 (ranks 0-1)" in r.stdout,
          "an MPMD job: %d %r" % (r.returncode, r.stderr or r.stdout[:300]))
    d = os.path.join(tmp, "bare-programs")
    for rank, prog in progs:
        p = subprocess.run([prog], capture_output=True, env=clean_env(
            OMP_NUM_THREADS="2", OMP_TOOL_LIBRARIES=LIB, GPUTOOL_OUTPUT=d, OMPI_MCA_ess_base_jobid="80",
            OMPI_COMM_WORLD_RANK=rank, OMPI_COMM_WORLD_SIZE="2"), cwd=tmp, timeout=300)
        check(p.returncode == 0, "rank %s (%s) alone: %d" % (rank, prog, p.returncode))
    r = report(d)
    check(r.returncode == 2 and "runs of different programs" in r.stderr and "split" in r.stderr,
          "two programs without a run id: %d %r" % (r.returncode, r.stderr))


def main():
    tmp = os.path.realpath(tempfile.mkdtemp(prefix="gt-run-"))
    if not os.path.exists(LIB):
        print("FAIL no %s" % LIB)
        sys.exit(1)

    # Every backend's variable names the library; output and sampling set.
    env, err = env_of(["-o", "out1", "--sample-hz", "1000"], tmp)
    for v in TOOL_VARS:
        check(env.get(v) == LIB, "%s=%r, expected %s" % (v, env.get(v), LIB))
    # Absolute, so that every process of the run writes there wherever it is.
    # (env measured nothing: its empty directory is gone again.)
    check(env.get("GPUTOOL_OUTPUT") == os.path.join(tmp, "out1"), "output directory %r" % env.get("GPUTOOL_OUTPUT"))
    check(env.get("GPUTOOL_RUN", "").startswith(os.uname().nodename + ":"), "run id %r" % env.get("GPUTOOL_RUN"))
    check(env.get("GPUTOOL_SAMPLE_HZ") == "1000", "GPUTOOL_SAMPLE_HZ")
    check(preloaded(env), "LD_PRELOAD=%r GPUTOOL_PRELOAD=%r" % (env.get("LD_PRELOAD"), env.get("GPUTOOL_PRELOAD")))
    check(not err, "unexpected notes: %r" % err)
    # Every backend selection preloads the library (one instance serves
    # them all). The user's LD_PRELOAD follows it; a sanitizer runtime that
    # leads the list stays first; a library already there is not added.
    for backends in ("omp", "cuda", "acc,opencl"):
        env, _ = env_of(["--backends", backends], tmp)
        check(preloaded(env), "--backends %s: LD_PRELOAD=%r" % (backends, env.get("LD_PRELOAD")))
    env, _ = env_of([], tmp, LD_PRELOAD="/x/a.so /x/b.so")
    check(preloaded(env, "/x/a.so /x/b.so"), "the user's LD_PRELOAD: %r" % env.get("LD_PRELOAD"))
    asan = "/x/libclang_rt.asan-x86_64.so:/x/libasan.so.8"
    env, _ = env_of([], tmp, LD_PRELOAD=asan + ":/x/a.so")
    check(env.get("LD_PRELOAD") == (asan + ":/x/a.so" if SANITIZED else asan + ":" + LIB + ":/x/a.so"),
          "a sanitizer runtime stays first: %r" % env.get("LD_PRELOAD"))
    if not SANITIZED:  # env cannot load a sanitizer build of the library
        env, _ = env_of([], tmp, LD_PRELOAD=LIB)
        check(env.get("LD_PRELOAD") == LIB, "no duplicate in LD_PRELOAD: %r" % env.get("LD_PRELOAD"))
    # GPUTOOL_PRELOAD=0 of the user's: kept, and the library not preloaded.
    env, _ = env_of([], tmp, GPUTOOL_PRELOAD="0")
    check(env.get("GPUTOOL_PRELOAD") == "0" and "LD_PRELOAD" not in env,
          "GPUTOOL_PRELOAD=0: LD_PRELOAD=%r" % env.get("LD_PRELOAD"))

    # The user's own settings are kept: lists joined, single ones left alone.
    env, err = env_of(["--backends", "omp,opencl,acc,cuda"], tmp, OMP_TOOL_LIBRARIES="/x/other.so",
                      OPENCL_LAYERS="/x/layer.so", ACC_PROFLIB="/x/acc.so", CUDA_INJECTION64_PATH="/x/inj.so",
                      GPUTOOL_OUTPUT="mine")
    check(env["OMP_TOOL_LIBRARIES"] == LIB + ":/x/other.so", "OMP_TOOL_LIBRARIES %r" % env["OMP_TOOL_LIBRARIES"])
    check(env["OPENCL_LAYERS"] == "/x/layer.so:" + LIB, "OPENCL_LAYERS %r" % env["OPENCL_LAYERS"])
    check(env["ACC_PROFLIB"] == "/x/acc.so" and env["CUDA_INJECTION64_PATH"] == "/x/inj.so",
          "single-library variables must be left alone")
    check("CUDA is not measured" in err and "OpenACC is not measured" in err and "goes first" in err,
          "notes about the user's settings: %r" % err)
    check(env["GPUTOOL_OUTPUT"] == os.path.join(tmp, "mine"), "a GPUTOOL_OUTPUT of the user's is kept")
    # Kokkos loads only the first library of KOKKOS_TOOLS_LIBS: the user's
    # tool stays, alone; with the older KOKKOS_PROFILE_LIBRARY set (Kokkos
    # aborts when the two differ) KOKKOS_TOOLS_LIBS stays unset.
    env, _ = env_of([], tmp)
    check(env.get("KOKKOS_TOOLS_LIBS") == LIB, "KOKKOS_TOOLS_LIBS %r" % env.get("KOKKOS_TOOLS_LIBS"))
    env, err = env_of([], tmp, KOKKOS_TOOLS_LIBS="/x/kp_kernel_timer.so")
    check(env["KOKKOS_TOOLS_LIBS"] == "/x/kp_kernel_timer.so" and "Kokkos is not measured" in err,
          "the user's KOKKOS_TOOLS_LIBS: %r %r" % (env["KOKKOS_TOOLS_LIBS"], err))
    env, err = env_of([], tmp, KOKKOS_PROFILE_LIBRARY="/x/kp_kernel_timer.so")
    check("KOKKOS_TOOLS_LIBS" not in env and env["KOKKOS_PROFILE_LIBRARY"] == "/x/kp_kernel_timer.so" and
          "not measured by label" in err, "the user's KOKKOS_PROFILE_LIBRARY: %r %r" % (env, err))
    env, err = env_of([], tmp, KOKKOS_PROFILE_LIBRARY=LIB)
    check("KOKKOS_TOOLS_LIBS" not in env and not err, "KOKKOS_PROFILE_LIBRARY naming gputool: %r" % err)
    # Already there: not added twice. Only some backends.
    env, _ = env_of([], tmp, OMP_TOOL_LIBRARIES=LIB, CUDA_INJECTION64_PATH=LIB)
    check(env["OMP_TOOL_LIBRARIES"] == LIB and env["CUDA_INJECTION64_PATH"] == LIB, "no duplicates")
    env, _ = env_of(["--backends", "omp"], tmp)
    check(env.get("OMP_TOOL_LIBRARIES") == LIB and not any(env.get(v) for v in TOOL_VARS[1:]), "--backends omp")
    # The library by its bare name (found on the library path only, so a
    # runtime would not find it): the full path goes in, and a note says why.
    env, err = env_of([], tmp, OMP_TOOL_LIBRARIES="libgputool.so", ACC_PROFLIB="libgputool.so")
    check(env["OMP_TOOL_LIBRARIES"] == LIB + ":libgputool.so" and env["ACC_PROFLIB"] == LIB,
          "bare names: OMP_TOOL_LIBRARIES=%r ACC_PROFLIB=%r" % (env["OMP_TOOL_LIBRARIES"], env["ACC_PROFLIB"]))
    check(err.count("names libgputool.so without a directory") == 2, "bare names: notes %r" % err)
    # Notes come from rank 0 only.
    _, err = env_of([], tmp, OMPI_COMM_WORLD_RANK="1", CUDA_INJECTION64_PATH="/x/inj.so")
    check(not err, "rank 1 should stay quiet: %r" % err)
    # The default directory: the program and the job id, the same on every rank.
    for rank in ("0", "3"):
        env, _ = env_of([], tmp, SLURM_JOB_ID="4711", SLURM_PROCID=rank)
        check(env.get("GPUTOOL_OUTPUT") == os.path.join(tmp, "gputool-env-4711"),
              "default directory %r" % env.get("GPUTOOL_OUTPUT"))
        check(env.get("GPUTOOL_RUN") == "job:4711", "the job's run id %r" % env.get("GPUTOOL_RUN"))
    env, _ = env_of([], tmp, OMPI_MCA_ess_base_jobid="12345")
    check(env.get("GPUTOOL_OUTPUT") == os.path.join(tmp, "gputool-env-12345"), "OpenMPI job id")
    env, _ = env_of([], tmp)
    check(env.get("GPUTOOL_OUTPUT", "").startswith(os.path.join(tmp, "gputool-env-")),
          "pid directory %r" % env.get("GPUTOOL_OUTPUT"))
    # --trace sets GPUTOOL_TRACE.
    env, err = env_of(["--trace"], tmp)
    check(env.get("GPUTOOL_TRACE") == "1", "--trace: %r %r" % (env.get("GPUTOOL_TRACE"), err))

    # Exit status and signals are the program's.
    code, _, _ = run(["--", "sh", "-c", "exit 3"], clean_env(), tmp)
    check(code == 3, "exit status 3 came back as %d" % code)
    code, _, _ = run(["--", "sh", "-c", "kill -TERM $$"], clean_env(), tmp)
    check(code == -signal.SIGTERM, "SIGTERM came back as %d" % code)
    code, _, err = run(["--", os.path.join(tmp, "no-such-program")], clean_env(), tmp)
    check(code == 127 and "cannot run" in err, "a missing program: %d %r" % (code, err))
    code, _, err = run(["--bogus", "--", "true"], clean_env(), tmp)
    check(code == 2 and "unknown option" in err, "a bad option: %d %r" % (code, err))
    code, _, err = run(["--sample-hz", "lots", "--", "true"], clean_env(), tmp)
    check(code == 2, "a bad --sample-hz: %d" % code)
    code, _, err = run([], clean_env(), tmp)
    check(code == 2 and "needs a program" in err, "no program: %d %r" % (code, err))
    code, _, err = run(["-o", "/proc/no/such/dir", "--", "true"], clean_env(), tmp)
    check(code == 125 and "cannot create" in err, "an impossible directory: %d %r" % (code, err))

    # A real measurement: the profile lands in the directory; the program's
    # output is untouched.
    if os.path.exists(SPLIT):
        p = subprocess.run([SPLIT, "500000"], capture_output=True, text=True, env=clean_env(OMP_NUM_THREADS="2"))
        code, out, err = run(["-o", "meas", "--", SPLIT, "500000"], clean_env(OMP_NUM_THREADS="2"), tmp)
        files = os.listdir(os.path.join(tmp, "meas"))
        check(code == 0 and out == p.stdout, "split under gputool run: %d %r" % (code, err))
        check(any(f.startswith("split-0-") and f.endswith(".gtprof") for f in files), "no profile in %s" % files)
        r = subprocess.run([GPUTOOL, "report", os.path.join(tmp, "meas")], capture_output=True, text=True)
        check(r.returncode == 0 and "compute (split.c:" in r.stdout, "report of the measurement: %s" % r.stderr)

        one_run_one_directory(tmp)

    if failures:
        print("check_run: %d failures (files in %s)" % (len(failures), tmp))
        sys.exit(1)
    shutil.rmtree(tmp)
    print("check_run: ok")


main()
