# SPDX-License-Identifier: MIT
"""OpenMP host measurement, end to end: the samples in samples/omp-host run
under libgputool.so; the profile must show what the samples are known to do.
Usage: test_omp_host.py BUILD_DIR"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import gtrun  # noqa: E402
from gtrun import (Fail, bounded, check, exclusive, main, no_runtime_frames, own_times, profiles, run,  # noqa: E402
                   run_gputool, run_under_tool)

BUILD = os.path.abspath(sys.argv[1])
LIB = os.path.join(BUILD, "libgputool.so")
GPUTOOL = os.path.join(BUILD, "gputool")
SAMPLES = os.path.join(BUILD, "samples", "omp-host")
ENV = {"OMP_NUM_THREADS": "2"}
# The samples print what they measured themselves (wall and CPU time) on
# stderr: times are checked against those, never against a fixed ratio, so
# that they hold however busy the machine is.
TIMES = {"SAMPLE_TIMES": "1"}
ITERS = 20  # calls of each caller in split.c


def one_profile(outdir):
    return gtrun.one_profile(GPUTOOL, outdir)



def region_under(p, caller):
    rs = [n for n in p.find("<omp parallel>") if caller in p.names(n)]
    check(len(rs) == 1, "expected one <omp parallel> under %s, found %d" % (caller, len(rs)))
    return rs[0]


def split_times(p, err, threads):
    """The tool's times of each region against the program's own: the
    region lies within the program's wall time around its calls and lasts
    at least as long as its busiest thread computed; the team's work covers
    its loops' CPU time; sampled CPU time matches the threads' own CPU time
    up to a sampling period per thread and call, and never exceeds what the
    team could spend."""
    own = own_times(err, "split times:")
    period = 1e9 / int(p.meta("sample_hz"))
    for who in ("heavy", "light"):
        r = region_under(p, who)
        wall, cpu = own[who]["wall_ns"], own[who]["cpu_ns"]
        par = p.excl(r, "OMP_PAR_TIME")
        bounded(par, cpu / threads, wall, "%s OMP_PAR_TIME" % who)
        for metric in ("OMP_WORK", "OMP_TASK_TIME"):
            bounded(p.excl(r, metric), cpu, threads * par, "%s %s" % (who, metric))
        # Each thread's part of each of the ITERS loops ends just after its
        # own CPU-time timer fired, when the tool's timer on that thread had
        # fired too: its samples carried all of the part's CPU time but at
        # most a period, however coarsely the timers fired on a busy machine,
        # and what they carry into a region from before it is a period and
        # the little CPU time between regions.
        slack = ITERS * threads * period
        bounded(p.incl(r, "CPUTIME"), cpu - slack, threads * par + slack + 10 * period, "%s CPUTIME" % who)


def test_split():
    outdir, err = run_under_tool(LIB, os.path.join(SAMPLES, "split"), env=dict(ENV, **TIMES))
    lines = [l for l in err.splitlines() if l.strip() and not l.startswith("split times:")]
    check(len(lines) == 1 and lines[0].startswith("gputool: report "),
          "expected one line on stderr, got %r" % err)
    p = one_profile(outdir)
    no_runtime_frames(p)
    heavy, light = region_under(p, "heavy"), region_under(p, "light")
    for r, who in ((heavy, "heavy"), (light, "light")):
        names = p.names(r)
        check(names[0] == "main", "%s region path starts at %s" % (who, names[0]))
        check(names[-2] == "compute" and names[-3] == who,
              "%s region context is %s" % (who, "/".join(names)))
        check(p.excl(r, "OMP_PAR_COUNT") == 20, "%s instances %s != 20" % (who, p.excl(r, "OMP_PAR_COUNT")))
        check(p.excl(r, "OMP_PAR_THREADS") == 40, "%s team sizes" % who)
        # The outlined body hangs under the placeholder, not under libomp.
        kids = [c.get("name") or "" for c in p.children.get(r["id"], [])]
        check(any("omp_outlined" in k for k in kids),
              "%s region children %s lack the outlined function" % (who, kids))
    split_times(p, err, 2)
    # Both threads worked in each region.
    for r in (heavy, light):
        n = p.per_thread(r, "OMP_WORK")[0]
        check(n == 2, "OMP_WORK on %d threads, expected 2" % n)
    check(p.meta("omp_target_hint") is None, "target hint for a program without offload")
    report = open([os.path.join(outdir, f) for f in os.listdir(outdir) if f.endswith(".txt")][0]).read()
    check("heavy" in report and "light" in report and "split.c:" in report,
          "text report lacks the callers or file:line")


def test_split_one_thread():
    outdir, err = run_under_tool(LIB, os.path.join(SAMPLES, "split"), env=dict(TIMES, OMP_NUM_THREADS="1"))
    p = one_profile(outdir)
    split_times(p, err, 1)
    check(p.excl(region_under(p, "heavy"), "OMP_PAR_THREADS") == 20, "team size 1")


def test_reductions():
    """split's regions reduce into one sum. With more than 4 threads LLVM
    combines the threads' values in the region's barrier, each step a
    reduction event: at least one per instance, at most one per thread
    but the first; their time lies inside the team's."""
    threads = 6
    outdir, _ = run_under_tool(LIB, os.path.join(SAMPLES, "split"), ["100000"],
                               env={"OMP_NUM_THREADS": str(threads)})
    p = one_profile(outdir)
    for who in ("heavy", "light"):
        r = region_under(p, who)
        reds = [n for n in p.descendants(r) if n.get("name") == "<omp reduction>"]
        check(len(reds) == 1, "%s: %d <omp reduction> nodes" % (who, len(reds)))
        n = p.excl(reds[0], "OMP_REDUCTION_COUNT")
        check(ITERS <= n <= ITERS * (threads - 1), "%s: %d reductions in %d instances" % (who, n, ITERS))
        t = p.excl(reds[0], "OMP_REDUCTION_TIME")
        check(t > 0, "%s: no reduction time" % who)
        bounded(t, None, threads * p.excl(r, "OMP_PAR_TIME"), "%s reduction time" % who)


def test_nested():
    outdir, _ = run_under_tool(LIB, os.path.join(SAMPLES, "nested"), env=ENV)
    p = one_profile(outdir)
    no_runtime_frames(p)
    regions = p.find("<omp parallel>")
    outer = [r for r in regions if p.names(r).count("<omp parallel>") == 1]
    inner = [r for r in regions if p.names(r).count("<omp parallel>") == 2]
    check(len(outer) == 1, "outer regions: %d" % len(outer))
    check(inner, "no inner region under the outer one")
    check(sum(p.excl(r, "OMP_PAR_COUNT") for r in outer) == 10, "outer instances")
    check(sum(p.excl(r, "OMP_PAR_COUNT") for r in inner) == 20,
          "inner instances %d != 20" % sum(p.excl(r, "OMP_PAR_COUNT") for r in inner))
    for r in inner:
        names = p.names(r)
        check("outer" in names and names[-2] == "inner", "inner region at %s" % "/".join(names))


def test_tasks():
    outdir, _ = run_under_tool(LIB, os.path.join(SAMPLES, "tasks"), env=ENV)
    p = one_profile(outdir)
    no_runtime_frames(p)
    tasks = p.find("<omp task>")
    many = [t for t in tasks if "spawn_many" in p.names(t)]
    few = [t for t in tasks if "spawn_few" in p.names(t)]
    check(len(many) == 1 and len(few) == 1, "task nodes: %d many, %d few" % (len(many), len(few)))
    check(p.excl(many[0], "OMP_EXPLICIT_TASKS") == 120, "spawn_many tasks %s" % p.excl(many[0], "OMP_EXPLICIT_TASKS"))
    check(p.excl(few[0], "OMP_EXPLICIT_TASKS") == 40, "spawn_few tasks")
    # Task time against the program's own time in its task bodies: each
    # task's time covers its body; on one thread the tasks run one after
    # another inside the one parallel region.
    outdir1, err1 = run_under_tool(LIB, os.path.join(SAMPLES, "tasks"), env=dict(TIMES, OMP_NUM_THREADS="1"))
    p1 = one_profile(outdir1)
    own = own_times(err1, "tasks times:")
    tasks1 = p1.find("<omp task>")
    h = sum(p1.excl(t, "OMP_EXPLICIT_TASK_TIME") for t in tasks1 if "spawn_many" in p1.names(t))
    l = sum(p1.excl(t, "OMP_EXPLICIT_TASK_TIME") for t in tasks1 if "spawn_few" in p1.names(t))
    region = sum(p1.excl(r, "OMP_PAR_TIME") for r in p1.find("<omp parallel>"))
    bounded(h, own["many"]["body_ns"], None, "spawn_many task time")
    bounded(l, own["few"]["body_ns"], None, "spawn_few task time")
    bounded(h + l, None, region, "task time on one thread")
    # Task bodies run under their creation site. They are most of the CPU
    # time, so 20 samples all but surely put some there; on a loaded machine
    # the kernel may deliver almost no CPU-time timer signal (0 to 4 in
    # such runs), and then there is nothing to place.
    bodies = [n for n in p.find("task_body")]
    check(bodies or p.total("SAMPLES") < 20,
          "%d samples, none in task_body" % p.total("SAMPLES"))
    check(all("<omp task>" in p.names(b) for b in bodies),
          "task_body outside <omp task>: %s" % ["/".join(p.names(b)) for b in bodies])


def test_fork_without_exec():
    # OMP_NUM_THREADS=1: libomp's worker threads do not survive a fork.
    outdir, _ = run_under_tool(LIB, os.path.join(SAMPLES, "forked"), env={"OMP_NUM_THREADS": "1"})
    ps = profiles(GPUTOOL, outdir)
    check(len(ps) == 2, "expected a profile per process, found %d" % len(ps))
    for p in ps:
        regions = p.find("<omp parallel>")
        callers = [c for r in regions for c in p.names(r) if c.endswith("_work")]
        check(len(callers) == 1, "pid %s profile has regions under %s" % (p.meta("pid"), callers))
        check(sum(p.excl(r, "OMP_PAR_COUNT") for r in regions) == 1, "instances")
    callers = sorted(c for p in ps for r in p.find("<omp parallel>") for c in p.names(r) if c.endswith("_work"))
    check(callers == ["child_work", "parent_work"], "callers over both profiles: %s" % callers)


def test_gcc_libgomp_untouched():
    exe = os.path.join(SAMPLES, "split-gcc")
    if not os.path.exists(exe):
        raise Fail("split-gcc was not built")
    outdir, err = run_under_tool(LIB, exe, env=ENV)
    check(err == "", "the tool wrote to stderr under libgomp: %r" % err)
    check(os.listdir(outdir) == [], "files written under libgomp: %s" % os.listdir(outdir))


def test_gcc_libgomp_said():
    """Under gputool run the tool is loaded all the same (preloaded, and
    libgomp loads it for OpenACC): it measures the CPU time it can, and says
    once, on stderr and in the report's header, that OpenMP went unmeasured."""
    exe = os.path.join(SAMPLES, "split-gcc")
    if not os.path.exists(exe):
        raise Fail("split-gcc was not built")
    with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
        if "GT_SANITIZE:BOOL=ON" in f.read():
            # A sanitizer build of the library cannot load into gcc's
            # uninstrumented program (libgomp's ACC_PROFLIB fails).
            return
    outdir, err = run_gputool(GPUTOOL, exe, env=ENV)
    check(err.count("OpenMP not measured: GCC's libgomp has no OMPT") == 1, "no single line on stderr: %r" % err)
    txt = [f for f in os.listdir(outdir) if f.endswith(".txt")]
    check(len(txt) == 1, "files %s" % os.listdir(outdir))
    header = open(os.path.join(outdir, txt[0])).read().split("\n\n")[0]
    check("OpenMP       GCC's libgomp (no OMPT)" in header, "no line in the report's header:\n%s" % header)


def test_gcc_threads_sampled():
    """GCC's libgomp never calls a tool, but preloaded (gputool run) the tool
    samples every thread the program creates: four threads doing the same
    work each carry the CPU time they measured themselves, up to a few
    sampling periods, and the header says in one line that no OpenMP
    region was measured."""
    exe = os.path.join(BUILD, "tests", "e2e", "gomp_threads")
    if not os.path.exists(exe):
        raise Fail("gomp_threads was not built")
    with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
        if "GT_SANITIZE:BOOL=ON" in f.read():
            return  # as in test_gcc_libgomp_said
    # Passive waits: a thread's CPU time is its work, not libgomp's spinning.
    outdir, err = run_gputool(GPUTOOL, exe, env={"OMP_WAIT_POLICY": "passive"})
    own = own_times(err, "gomp times:")
    cpu = [own["t%d" % i]["cpu_ns"] for i in range(4)]
    p = one_profile(outdir)
    period = 1e9 / int(p.meta("sample_hz"))
    # spin's samples, on the initial thread (under main) and on the
    # workers (at the root); a sample's line makes a context of its own.
    spins = p.find("spin")
    on_main = [n for n in spins if "main" in p.names(n)[:-2]]
    on_workers = sorted((n for n in spins if n not in on_main), key=lambda n: -p.incl(n, "CPUTIME"))
    check(on_main and on_workers, "spin contexts: %s" % ["/".join(p.names(n)) for n in spins])
    main_ns = sum(p.incl(n, "CPUTIME") for n in on_main)
    work_ns = sum(p.incl(n, "CPUTIME") for n in on_workers)
    n_main = max(p.per_thread(n, "CPUTIME")[0] for n in on_main)
    n_work, lo, hi, top = p.per_thread(on_workers[0], "CPUTIME")
    check(n_main == 1 and n_work == 3, "threads sampled in spin: %d + %d, expected 1 + 3" % (n_main, n_work))
    # A thread's samples carry its CPU time up to a period at each end of
    # the work and one the kernel merged, whatever the load.
    slack = 3 * period
    bounded(main_ns, cpu[0] - slack, cpu[0] + slack, "initial thread's spin CPUTIME")
    bounded(work_ns, sum(cpu[1:]) - 3 * slack, sum(cpu[1:]) + 3 * slack, "workers' spin CPUTIME")
    # Per worker: its samples in the main context, up to what the others
    # of its samples hold.
    rest = work_ns - top
    bounded(lo, min(cpu[1:]) - slack - rest, max(cpu[1:]) + slack, "a worker's least spin CPUTIME")
    bounded(hi, min(cpu[1:]) - slack - rest, max(cpu[1:]) + slack, "a worker's most spin CPUTIME")
    # Each thread's share of the program's work, as the program measured it.
    share_tool, share_own = main_ns / (main_ns + work_ns), cpu[0] / sum(cpu)
    check(abs(share_tool - share_own) <= 4 * slack / sum(cpu),
          "initial thread's share %.3f, measured %.3f" % (share_tool, share_own))
    txt = [f for f in os.listdir(outdir) if f.endswith(".txt")]
    header = open(os.path.join(outdir, txt[0])).read().split("\n\n")[0]
    said = [l for l in header.splitlines() if "no OMPT" in l]
    check(said == ["  OpenMP       GCC's libgomp (no OMPT): no OpenMP regions measured, CPU time sampled on "
                   "4 threads; build with clang -fopenmp to measure regions"], "header lines: %s" % said)
    # At a narrower width the sentence wraps under its value's column, whole.
    width = 100
    p = subprocess.run([GPUTOOL, "report", outdir, "--width", str(width)], capture_output=True, text=True,
                       timeout=120)
    header = p.stdout.split("\n\n")[0].splitlines()
    wide = [l for l in header if len(l) > width]
    check(p.returncode == 0 and not wide, "header lines wider than %d: %s" % (width, wide))
    at = [k for k, l in enumerate(header) if l.startswith("  OpenMP ")]
    said = " ".join(l.strip() for l in header[at[0]:at[0] + 2]) if at else ""
    check(said.endswith("build with clang -fopenmp to measure regions") and
          header[at[0] + 1].startswith(" " * 15), "the OpenMP line at --width %d: %s" % (width, header))


def test_bad_env_values():
    env = dict(ENV, GPUTOOL_SAMPLE_HZ="fast", GPUTOOL_BOGUS="1")
    outdir, err = run_under_tool(LIB, os.path.join(SAMPLES, "split"), ["1000000"], env=env)
    check(re.search(r"GPUTOOL_SAMPLE_HZ='fast' is not valid.*using the default", err),
          "no line about the bad value: %r" % err)
    check("unknown variable GPUTOOL_BOGUS" in err, "no line about the unknown name: %r" % err)
    check(len([l for l in err.splitlines() if "GPUTOOL_SAMPLE_HZ" in l]) == 1, "repeated warning")
    p = one_profile(outdir)
    check(p.meta("sample_hz") == "200", "sample_hz %s, expected the default" % p.meta("sample_hz"))


def test_disable_and_sampling_off():
    outdir, err = run_under_tool(LIB, os.path.join(SAMPLES, "split"), ["1000000"],
                                 env=dict(ENV, GPUTOOL_DISABLE="1"))
    check(os.listdir(outdir) == [] and err == "", "GPUTOOL_DISABLE=1 still measured")
    outdir, err = run_under_tool(LIB, os.path.join(SAMPLES, "split"), ["1000000"],
                                 env=dict(ENV, GPUTOOL_SAMPLE_HZ="0"))
    p = one_profile(outdir)
    check(all("CPUTIME" not in exclusive(n) for n in p.doc["nodes"]),
          "CPUTIME recorded with sampling off")
    check(sum(p.excl(r, "OMP_PAR_COUNT") for r in p.find("<omp parallel>")) == 40, "instances")


def test_thread_limit():
    """More threads than GPUTOOL_MAX_THREADS: the others are not measured,
    and the run says how many, once on stderr and in both reports."""
    outdir, err = run_under_tool(LIB, os.path.join(SAMPLES, "split"), ["100000"],
                                 env=dict(ENV, OMP_NUM_THREADS="12", GPUTOOL_MAX_THREADS="4"))
    check(err.count("the others are not measured") == 1, "stderr %r" % err)
    p = one_profile(outdir)
    check(p.meta("threads_unmeasured") == "8" and p.threads() == 4,
          "unmeasured %r, threads %d" % (p.meta("threads_unmeasured"), p.threads()))
    txt = [f for f in os.listdir(outdir) if f.endswith(".txt")]
    with open(os.path.join(outdir, txt[0])) as f:
        check("8 threads beyond GPUTOOL_MAX_THREADS" in f.read(), "the report does not count them")
    code, out, err = run([GPUTOOL, "report", outdir])
    check(code == 0 and "8 threads beyond GPUTOOL_MAX_THREADS" in out, "gputool report does not count them")


def test_ranks_do_not_collide():
    outdir = None
    names = set()
    for rank in ("0", "1"):
        outdir, _ = run_under_tool(LIB, os.path.join(SAMPLES, "split"), ["500000"],
                                   env=dict(ENV, OMPI_COMM_WORLD_RANK=rank), outdir=outdir)
    names = sorted(os.listdir(outdir))
    check(len(names) == 4, "expected 2 files per rank, found %s" % names)
    check(any("-0-" in n for n in names) and any("-1-" in n for n in names),
          "rank missing from file names: %s" % names)
    ranks = sorted(p.meta("rank") for p in profiles(GPUTOOL, outdir))
    check(ranks == ["0", "1"], "ranks in profiles: %s" % ranks)


def test_mpirun():
    mpirun = "/usr/bin/mpirun"
    if not os.path.exists(mpirun):
        raise Fail("mpirun is not installed")
    cwd = os.getcwd()
    work = __import__("tempfile").mkdtemp(prefix="gputool-mpi-")
    os.chdir(work)
    try:
        code, out, err = run([mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2",
                              "-x", "OMP_TOOL_LIBRARIES=" + LIB, "-x", "OMP_NUM_THREADS=1",
                              os.path.join(SAMPLES, "split"), "300000"])
        check(code == 0, "mpirun failed: %s" % err)
        dirs = [d for d in os.listdir(work) if d.startswith("gputool-split-")]
        check(len(dirs) == 1, "expected one shared directory, found %s" % dirs)
        files = sorted(f for f in os.listdir(os.path.join(work, dirs[0])) if f.endswith(".gtprof"))
        check(len(files) == 2 and files[0] != files[1], "per-rank profiles: %s" % files)
    finally:
        os.chdir(cwd)


main([
    ("split: two callers, exact counts, times within the program's own", test_split),
    ("split on one thread: times within the program's own", test_split_one_thread),
    ("reductions under their regions, counted and timed", test_reductions),
    ("nested regions", test_nested),
    ("tasks at two sites", test_tasks),
    ("fork without exec: each process its own work", test_fork_without_exec),
    ("gcc/libgomp program untouched", test_gcc_libgomp_untouched),
    ("gcc/libgomp program under gputool run: OpenMP said unmeasured", test_gcc_libgomp_said),
    ("gcc/libgomp program under gputool run: every thread sampled", test_gcc_threads_sampled),
    ("bad GPUTOOL_* values", test_bad_env_values),
    ("GPUTOOL_DISABLE and GPUTOOL_SAMPLE_HZ=0", test_disable_and_sampling_off),
    ("more threads than GPUTOOL_MAX_THREADS", test_thread_limit),
    ("ranks do not collide", test_ranks_do_not_collide),
    ("mpirun: one directory, a file per rank", test_mpirun),
])
