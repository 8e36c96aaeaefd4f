# SPDX-License-Identifier: MIT
"""Tasks created inside tasks, recursive taskloops (whose chunks LLVM creates
on whichever thread runs a helper task) and nested parallel regions, on
8 threads, under libgputool.so.

  test_tasks_mix.py BUILD_DIR contexts   counts and contexts, exactly
  test_tasks_mix.py BUILD_DIR stress     200 runs: none may hang or fail
  test_tasks_mix.py BUILD_DIR tsan       the ThreadSanitizer build: no race
                                         report, and the same counts
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from gtrun import Fail, check, main, no_runtime_frames, one_profile, run  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
MODE = sys.argv[2]
LIB = os.path.join(BUILD, "libgputool.so")
GPUTOOL = os.path.join(BUILD, "gputool")
EXE = os.path.join(BUILD, "tests", "omp-tasks", "tasks_mix")
ROUNDS = 4  # per run; the stress runs one round per run
TREE_TASKS = 126 + 2 * 6  # per round: tree(6) from single, tree(2) in two nested regions
TREE_WAITS = 63 + 2 * 3  # per round: a taskwait in every tree() call of depth > 0
LOOP_TASKS = 200


def parse(out):
    return {k: int(v) for k, v in (line.split() for line in out.splitlines() if line.strip())}


def frame_function(p, node):
    """The function of the nearest frame above node."""
    for n in reversed(p.path(node)[:-1]):
        if n.get("kind") == "frame":
            return n.get("function") or n.get("name")
    return None


def check_profile(p, threads):
    no_runtime_frames(p)
    by_site = {}
    for t in p.find("<omp task>"):
        fn = frame_function(p, t)
        check(fn is not None, "task without a call site: %s" % "/".join(p.names(t)))
        by_site[fn] = by_site.get(fn, 0) + p.excl(t, "OMP_EXPLICIT_TASKS")
    print("  explicit tasks by construct site: %s" % by_site)
    check(set(by_site) == {"tree", "loop", "nested.omp_outlined"},
          "tasks at unexpected sites: %s" % sorted(by_site))
    check(by_site["tree"] == ROUNDS * TREE_TASKS,
          "tree tasks %d, expected %d" % (by_site["tree"], ROUNDS * TREE_TASKS))
    check(by_site["nested.omp_outlined"] == ROUNDS * 2, "nested-region tasks %d" % by_site["nested.omp_outlined"])
    # One taskloop from the single, one from every thread, per round. Each
    # chunk is a task; LLVM adds helper tasks that split the range between
    # threads (fewer than the chunks).
    chunks = ROUNDS * LOOP_TASKS * (threads + 1)
    check(chunks <= by_site["loop"] < 2 * chunks,
          "taskloop tasks %d, expected %d chunks plus fewer helpers" % (by_site["loop"], chunks))
    # The taskwaits' placeholder under their own call site, in tree, where
    # its tasks' <omp task> are too: a thread creates tasks and waits at
    # sites of one function in turn. (The taskloops' taskgroups are
    # counted; where libomp says they are depends on its tail calls.)
    waits = {}
    for w in p.find("<omp taskwait>"):
        fn = frame_function(p, w)
        waits[fn] = waits.get(fn, 0) + p.excl(w, "OMP_WAIT_COUNT")
    groups = sum(p.excl(g, "OMP_WAIT_COUNT") for g in p.find("<omp taskgroup>"))
    print("  taskwaits by site: %s, taskgroups %d" % (waits, groups))
    check(waits == {"tree": ROUNDS * TREE_WAITS}, "taskwaits %s, expected %d in tree" % (waits, ROUNDS * TREE_WAITS))
    check(groups == ROUNDS * (threads + 1), "taskloop taskgroups %d, expected %d" % (groups, ROUNDS * (threads + 1)))
    regions = p.find("<omp parallel>")
    outer = sum(p.excl(r, "OMP_PAR_COUNT") for r in regions if p.names(r).count("<omp parallel>") == 1)
    inner = [r for r in regions if p.names(r).count("<omp parallel>") == 2]
    check(outer == ROUNDS, "outer regions %d" % outer)
    check(sum(p.excl(r, "OMP_PAR_COUNT") for r in inner) == 2 * ROUNDS, "inner regions")
    for r in inner:
        check(frame_function(p, r) == "nested", "inner region at %s" % "/".join(p.names(r)))


# More threads than cores on a busy machine: threads that wait sleep
# instead of spinning, so a run takes as long as its work.
QUIET = {"OMP_WAIT_POLICY": "passive"}


def run_once(env, outdir, timeout, rounds=ROUNDS):
    env = dict(env, OMP_TOOL_LIBRARIES=LIB, GPUTOOL_OUTPUT=outdir, **QUIET)
    return run([EXE, str(rounds)], env=env, timeout=timeout)


# The OpenMP runtime is not instrumented: accesses it makes through
# intercepted calls are left out, as libomp itself advises.
TSAN_OPTIONS = ("ignore_noninstrumented_modules=1 halt_on_error=1 exitcode=66 report_signal_unsafe=1 "
                "suppressions=" + os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tsan.supp"))
if shutil.which("llvm-symbolizer"):
    TSAN_OPTIONS += " external_symbolizer_path=" + shutil.which("llvm-symbolizer")


def expected_output(threads, env=None, rounds=ROUNDS):
    code, out, err = run([EXE, str(rounds)], env=dict(env or {}, OMP_NUM_THREADS=str(threads), **QUIET))
    check(code == 0, "tasks_mix failed without the tool: %s" % err)
    got = parse(out)
    check(got["tree_tasks"] == rounds * TREE_TASKS and got["tree_waits"] == rounds * TREE_WAITS and
          got["threads"] == threads and
          got["loop_iters"] == rounds * LOOP_TASKS * (threads + 1), "tasks_mix counted %s" % got)
    return out


def test_contexts():
    threads = 8
    want = expected_output(threads)
    outdir = tempfile.mkdtemp(prefix="gputool-tasks-")
    code, out, err = run_once({"OMP_NUM_THREADS": str(threads)}, outdir, 300)
    check(code == 0, "exit %d under the tool: %s" % (code, err[-2000:]))
    check(out == want, "stdout changed under the tool:\n%s\nvs\n%s" % (out, want))
    check_profile(one_profile(GPUTOOL, outdir), threads)


def test_stress():
    # One round a run: every run still has taskloops split by helper tasks
    # on all threads at once, and 200 runs stay short on a loaded machine
    # (waiting threads sleep, so each barrier there costs a wake-up).
    runs, threads, timeout = 200, 4, 120
    want = expected_output(threads, rounds=1)
    hung = failed = 0
    with tempfile.TemporaryDirectory(prefix="gputool-tasks-") as tmp:
        for i in range(runs):
            outdir = os.path.join(tmp, str(i))
            try:
                code, out, err = run_once({"OMP_NUM_THREADS": str(threads), "GPUTOOL_SAMPLE_HZ": "1000"},
                                          outdir, timeout, rounds=1)
            except subprocess.TimeoutExpired:
                hung += 1
                print("  run %d: no exit after %d s" % (i, timeout))
                continue
            if code != 0 or out != want:
                failed += 1
                print("  run %d: exit %d, stderr %s" % (i, code, err[-500:]))
            shutil.rmtree(outdir, ignore_errors=True)
    print("  %d runs on %d threads: %d hung, %d failed" % (runs, threads, hung, failed))
    check(hung == 0 and failed == 0, "%d of %d runs hung, %d failed" % (hung, runs, failed))


def test_tsan():
    threads = 8
    env = {"OMP_NUM_THREADS": str(threads), "TSAN_OPTIONS": TSAN_OPTIONS}
    want = expected_output(threads, env)
    outdir = tempfile.mkdtemp(prefix="gputool-tasks-tsan-")
    code, out, err = run_once(env, outdir, 600)
    check("ThreadSanitizer" not in err, "ThreadSanitizer reported:\n%s" % err[:6000])
    check(code == 0, "exit %d under the tool: %s" % (code, err[-2000:]))
    check(out == want, "stdout changed under the tool")
    check_profile(one_profile(GPUTOOL, outdir), threads)


if __name__ == "__main__":
    main({"contexts": [("tasks, taskloop and nested regions on 8 threads", test_contexts)],
          "stress": [("200 taskloop runs without a hang", test_stress)],
          "tsan": [("no data race in the tool (ThreadSanitizer)", test_tsan)]}[MODE])
