# SPDX-License-Identifier: MIT
"""`gputool run` preloads the library, which then starts at load: a program
with no OpenMP, no GPU and no other runtime is measured from process start,
and a runtime that loads the tool later gets the preloaded instance.
Usage: test_preload.py BUILD_DIR PLAIN_CPU PRELOAD_SAME

Times are checked against what plain_cpu measured itself (its process's CPU
time), never against a fixed figure, so that the test holds on a busy
machine."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from gtrun import check, main, one_profile, profiles, run  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
PLAIN = os.path.abspath(sys.argv[2])
SAME = os.path.abspath(sys.argv[3])
GPUTOOL = os.path.join(BUILD, "gputool")
LIB = os.path.realpath(os.path.join(BUILD, "libgputool.so"))
SPLIT = os.path.join(BUILD, "samples", "omp-host", "split")
BURN_S = "0.3"
# Sampled against measured CPU time of burn(): the sampler's error is a
# period or two at its ends; this also holds a tool that lost a large part.
REL = 0.25
MIN_SAMPLES = 3


def sanitized():
    """A sanitizer build of the library is preloaded only into programs that
    carry the sanitizer's runtime (analysis/launch.c): not into a shell."""
    try:
        with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
            cache = f.read()
    except OSError:
        return False
    return "GT_SANITIZE:BOOL=ON" in cache or "GT_TSAN:BOOL=ON" in cache


def own_times(err, n=1):
    """Each process's line "plain_cpu times: pid P burn_ns N total_ns M" on
    stderr: {P: {"burn_ns": N, "total_ns": M}}."""
    out = {}
    for l in err.splitlines():
        if l.startswith("plain_cpu times: "):
            w = l.split()[2:]
            d = {w[i]: int(w[i + 1]) for i in range(0, len(w) - 1, 2)}
            out[str(d.pop("pid"))] = d
    check(len(out) == n, "expected %d 'plain_cpu times' lines on stderr, got %r" % (n, err))
    return out


def check_burn(p, own):
    """burn()'s sampled CPU time in profile p against what the process
    measured itself."""
    period = 1e9 / int(p.meta("sample_hz"))
    # burn() under main(), a node per source line the samples fell on.
    burns = [n for n in p.find("burn") if p.names(n)[-2:-1] == ["main"]]
    check(burns, "pid %s: no main > burn context" % p.meta("pid"))
    cpu = sum(p.incl(n, "CPUTIME") for n in burns)
    samples = sum(p.incl(n, "SAMPLES") for n in burns)
    print("  pid %s: burn sampled %.1f ms in %d samples; the process measured %.1f ms (%.1f ms in all)" %
          (p.meta("pid"), cpu / 1e6, samples, own["burn_ns"] / 1e6, own["total_ns"] / 1e6))
    check(samples >= MIN_SAMPLES, "burn has %d samples, expected at least %d" % (samples, MIN_SAMPLES))
    check(abs(cpu - own["burn_ns"]) <= REL * own["burn_ns"],
          "burn: %.1f ms sampled, the process measured %.1f ms (within %d%%)" %
          (cpu / 1e6, own["burn_ns"] / 1e6, REL * 100))
    # Nothing is sampled that the process did not spend.
    root = p.doc["nodes"][0]
    check(p.incl(root, "CPUTIME") <= own["total_ns"] + 2 * period,
          "%.1f ms sampled in all, more than the process's %.1f ms" %
          (p.incl(root, "CPUTIME") / 1e6, own["total_ns"] / 1e6))


def gputool_run(outdir, args, env=None):
    return run([GPUTOOL, "run", "-o", outdir, "--"] + args, env=env, unset=("LD_PRELOAD",))


def test_plain_program():
    code0, out0, _ = run([PLAIN, BURN_S], unset=("LD_PRELOAD",))
    outdir = tempfile.mkdtemp(prefix="gputool-e2e-preload-")
    code1, out1, err1 = gputool_run(outdir, [PLAIN, BURN_S])
    check(code0 == 3 and code1 == 3, "exit status %d bare, %d under gputool run; expected 3" % (code0, code1))
    check(out0 == out1 and out1.startswith("plain_cpu: burned"), "stdout changed:\n%r\nvs\n%r" % (out0, out1))
    check("gputool: report " in err1, "no report line on stderr: %r" % err1)
    own = own_times(err1)
    p = one_profile(GPUTOOL, outdir)
    check(p.meta("pid") in own, "profile of pid %s, the program was %s" % (p.meta("pid"), list(own)))
    check_burn(p, own[p.meta("pid")])


def test_forked_child():
    """A child forked without exec measures what it does itself, into its
    own profile."""
    args = [PLAIN, "0.15", "fork"]
    code0, out0, _ = run(args, unset=("LD_PRELOAD",))
    outdir = tempfile.mkdtemp(prefix="gputool-e2e-preload-")
    code1, out1, err1 = gputool_run(outdir, args)
    check(code0 == 3 and code1 == 3, "exit status %d bare, %d under gputool run; expected 3" % (code0, code1))
    check(out0 == out1, "stdout changed:\n%r\nvs\n%r" % (out0, out1))
    own = own_times(err1, 2)
    ps = profiles(GPUTOOL, outdir)
    check(sorted(q.meta("pid") for q in ps) == sorted(own), "profiles of pids %s, processes %s" %
          ([q.meta("pid") for q in ps], list(own)))
    for q in ps:
        check_burn(q, own[q.meta("pid")])


def test_shell_wrapper():
    """A shell between gputool run and the program: the preload goes on to
    the program; the shell exits with its own status, nothing hangs, stdout
    is the same."""
    script = '"$0" 0.1; echo "sh: $?"; exit 4'
    code0, out0, _ = run(["sh", "-c", script, PLAIN], unset=("LD_PRELOAD",))
    outdir = tempfile.mkdtemp(prefix="gputool-e2e-preload-")
    code1, out1, err1 = gputool_run(outdir, ["sh", "-c", script, PLAIN])
    check(code0 == 4 and code1 == 4, "exit status %d bare, %d under gputool run; expected 4" % (code0, code1))
    check(out0 == out1 and "sh: 3" in out1, "stdout changed:\n%r\nvs\n%r" % (out0, out1))
    if sanitized():
        return
    exes = [q.meta("exe") for q in profiles(GPUTOOL, outdir)]
    check("plain_cpu" in exes, "no profile of plain_cpu behind the shell: %s; %r" % (exes, err1))


def test_one_instance():
    """The paths the runtimes open are the preloaded library itself."""
    outdir = tempfile.mkdtemp(prefix="gputool-e2e-preload-")
    code, out, err = gputool_run(outdir, [SAME])
    check(code == 0, "preload_same: exit %d: %s" % (code, err))
    lines = out.splitlines()
    for v in ("OMP_TOOL_LIBRARIES", "OPENCL_LAYERS", "ACC_PROFLIB", "CUDA_INJECTION64_PATH"):
        check(v + " same" in lines, "a runtime opening %s gets another library: %r" % (v, out))
    check("copies 1" in lines, "libgputool.so loaded more than once: %r" % out)


def test_openmp_attaches():
    """An OpenMP program: libomp starts the preloaded tool's OMPT."""
    if not os.path.exists(SPLIT):
        print("  (no %s: skipped)" % SPLIT)
        return
    outdir = tempfile.mkdtemp(prefix="gputool-e2e-preload-")
    code, _, err = gputool_run(outdir, [SPLIT, "100000"], env={"OMP_NUM_THREADS": "2"})
    check(code == 0, "split: exit %d: %s" % (code, err))
    p = one_profile(GPUTOOL, outdir)
    check(p.meta("omp_runtime"), "no OpenMP runtime attached: %s" % p.process()["meta"])
    check(p.find("<omp parallel>"), "no <omp parallel> in the profile")


def test_preload_alone_does_nothing():
    """Preloaded without GPUTOOL_PRELOAD (or with 0): the library does
    nothing until a runtime starts it; here none does."""
    for extra in ({}, {"GPUTOOL_PRELOAD": "0"}):
        outdir = os.path.join(tempfile.mkdtemp(prefix="gputool-e2e-preload-"), "none")
        env = dict(extra, LD_PRELOAD=LIB, GPUTOOL_OUTPUT=outdir)
        code, out, err = run([PLAIN, "0.05"], env=env)
        check(code == 3 and out.startswith("plain_cpu: burned"), "exit %d, stdout %r" % (code, out))
        check(not os.path.exists(outdir) and "gputool" not in err,
              "%s: the library acted: %r, %s" % (extra, err, os.path.exists(outdir)))


main([("a program with no runtime is measured from process start", test_plain_program),
      ("a child forked without exec", test_forked_child),
      ("a shell between gputool run and the program", test_shell_wrapper),
      ("the runtimes' paths open the preloaded instance", test_one_instance),
      ("an OpenMP program attaches to the preloaded tool", test_openmp_attaches),
      ("LD_PRELOAD without GPUTOOL_PRELOAD does nothing", test_preload_alone_does_nothing)])
