# SPDX-License-Identifier: MIT
"""Explicit tasks' time, each task timed or a site of very short tasks timed
by sampling (GPUTOOL_EXACT_TIMING, docs/REPORT.md), on 2 threads, under
libgputool.so, against the task bodies' time the program measures itself.

  test_task_timing.py BUILD_DIR sampled   default: the long tasks timed each,
                                          the tiny ones sampled and listed
  test_task_timing.py BUILD_DIR exact     GPUTOOL_EXACT_TIMING=1: every task
                                          timed, no sampled site
  test_task_timing.py BUILD_DIR held      1 thread, the first tiny tasks held up:
                                          well under half of the 64 a construct
                                          is judged by keep it sampled, well
                                          over half time it exactly (their
                                          median)
  test_task_timing.py BUILD_DIR shared    2 threads, 40 tasks of one construct
                                          each: the construct is judged by
                                          its first 64 tasks in the process,
                                          not 64 on each thread
  test_task_timing.py BUILD_DIR many      1 thread, 72 constructs, more than a
                                          thread keeps judgements of: each
                                          sampled all the same
  test_task_timing.py BUILD_DIR waits     2 threads, 2,000 tasks each, each
                                          waited for at once: the taskwait
                                          construct's waits sampled, counts
                                          exact, the estimate against the
                                          waits' own time; none sampled under
                                          GPUTOOL_EXACT_TIMING=1
  test_task_timing.py BUILD_DIR waited    a taskwait of 200 ms, its thread
                                          spinning: its CPU samples under
                                          its <omp taskwait>
  test_task_timing.py BUILD_DIR tsan      the ThreadSanitizer build, 8 threads:
                                          no race report, the same counts
"""
import glob
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from gtrun import bounded, check, main, one_profile, own_times, run  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
MODE = sys.argv[2]
LIB = os.path.join(BUILD, "libgputool.so")
GPUTOOL = os.path.join(BUILD, "gputool")
EXE = os.path.join(BUILD, "tests", "omp-tasks", "task_timing")
LONG_N, TINY_N, PATH_A_N, PATH_B_N = 200, 20000, 300, 100
SAMPLE_EVERY = 16  # one tiny task timed in this many (ompt/ompt-internal.h)
SECTION = "Explicit tasks timed by sampling"
ENV = {"OMP_NUM_THREADS": "2", "OMP_WAIT_POLICY": "passive", "SAMPLE_TIMES": "1"}


def frame_functions(p, node):
    return [n.get("function") or n.get("name") for n in p.path(node) if n.get("kind") in ("frame", "tail", "inline")]


def by_construct(p, metric):
    """metric at the <omp task> nodes, summed by the function that holds the construct."""
    out = {}
    for t in p.find("<omp task>"):
        fn = frame_functions(p, t)[-1]
        out[fn] = out.get(fn, 0) + p.excl(t, metric)
    return out


def run_tool(extra, env=ENV):
    code, want, err = run([EXE], env=env)
    check(code == 0, "task_timing failed without the tool: %s" % err)
    outdir = tempfile.mkdtemp(prefix="gputool-task-timing-")
    code, out, err = run([EXE], env=dict(env, OMP_TOOL_LIBRARIES=LIB, GPUTOOL_OUTPUT=outdir, **extra))
    check("ThreadSanitizer" not in err, "ThreadSanitizer reported:\n%s" % err[:6000])
    check(code == 0, "exit %d under the tool: %s" % (code, err[-2000:]))
    check(out == want, "stdout changed under the tool:\n%s\nvs\n%s" % (out, want))
    # A variable the library does not know is reported on stderr.
    check(not any(k in err for k in extra), "the library did not take %s: %s" % (extra, err[-2000:]))
    texts = glob.glob(os.path.join(outdir, "*.txt"))
    check(len(texts) == 1, "one report in %s: %s" % (outdir, texts))
    return one_profile(GPUTOOL, outdir), own_times(err, "task_timing times:"), open(texts[0]).read()


def check_counts(p):
    tasks = by_construct(p, "OMP_EXPLICIT_TASKS")
    check(tasks.get("long_tasks") == LONG_N and tasks.get("tiny_tasks") == TINY_N,
          "tasks by construct: %s" % tasks)
    # One construct along two call paths: two contexts, counted apart.
    one = [t for t in p.find("<omp task>") if frame_functions(p, t)[-1] == "make_one"]
    paths = sorted((frame_functions(p, t)[-2], p.excl(t, "OMP_EXPLICIT_TASKS")) for t in one)
    check(paths == [("path_a", PATH_A_N), ("path_b", PATH_B_N)], "make_one's contexts: %s" % paths)
    # And its taskwait's.
    one = [t for t in p.find("<omp taskwait>") if frame_functions(p, t)[-1] == "make_one"]
    paths = sorted((frame_functions(p, t)[-2], p.excl(t, "OMP_WAIT_COUNT")) for t in one)
    check(paths == [("path_a", PATH_A_N), ("path_b", PATH_B_N)], "make_one's taskwait contexts: %s" % paths)


def check_samples_in_tasks(p):
    # CPU samples in task bodies, untimed tasks' included (they run without
    # a record of the tool's), hang under their <omp task>: all but those
    # of a task another thread created that ran before this thread had a
    # copy of its <omp task> (the sampling handler makes none), at most
    # two samples here.
    inside = outside = 0
    for n in p.find("body"):
        if not p.incl(n, "CPUTIME"):
            continue
        if "<omp task>" in p.names(n):
            inside += p.incl(n, "CPUTIME")
        else:
            outside += p.incl(n, "CPUTIME")
            print("  body's samples outside a task: %s" % " / ".join(p.names(n)))
    check(inside > 0 and outside <= 2 * p.sample_weight(),
          "CPU time in task bodies: %.1f ms under <omp task>, %.1f ms elsewhere" % (inside / 1e6, outside / 1e6))


def check_long(p, own):
    # Timed each: a task's time covers its body, and little more.
    t = by_construct(p, "OMP_EXPLICIT_TASK_TIME")["long_tasks"]
    check(by_construct(p, "OMP_TASK_TIME_SAMPLES").get("long_tasks", 0) == 0, "long tasks sampled")
    bounded(t, own["long"]["body_ns"], 1.5 * own["long"]["body_ns"] + 20e6, "long tasks' time")


def test_sampled():
    p, own, text = run_tool({})
    check_counts(p)
    check_long(p, own)
    check_samples_in_tasks(p)
    samples = by_construct(p, "OMP_TASK_TIME_SAMPLES")
    # 20,000 tiny tasks: all but the first 64 (and those that began while
    # they were judged) are sampled, one in 16 on each thread.
    lo_n = (TINY_N - 2 * 64) // SAMPLE_EVERY - 2
    check(lo_n <= samples.get("tiny_tasks", 0) <= TINY_N // SAMPLE_EVERY + 2 * 64,
          "tiny tasks timed as samples: %s" % samples)
    # The estimate against the bodies: each timed task stands for 16, so
    # one the machine delayed weighs 16 times (max_ns bounds that), and a
    # tiny task's time includes the runtime's start and end of it.
    t = by_construct(p, "OMP_EXPLICIT_TASK_TIME")["tiny_tasks"]
    tiny = own["tiny"]
    print("  tiny tasks: estimate %.2f ms, bodies %.2f ms (longest %.3f ms)" %
          (t / 1e6, tiny["body_ns"] / 1e6, tiny["max_ns"] / 1e6))
    bounded(t, 0.25 * (tiny["body_ns"] - tiny["max_ns"]), 4 * tiny["body_ns"] + SAMPLE_EVERY * tiny["max_ns"],
            "tiny tasks' estimated time")
    # The report lists the construct, and only it.
    check(SECTION in text, "no sampled section in the report")
    section = text[text.index(SECTION):].split("\n\n")[0]
    check("tiny_tasks" in section and "long_tasks" not in section, "sampled section:\n%s" % section)


def test_exact():
    p, own, text = run_tool({"GPUTOOL_EXACT_TIMING": "1"})
    check_counts(p)
    check_long(p, own)
    check(p.total("OMP_TASK_TIME_SAMPLES") == 0, "tasks sampled under GPUTOOL_EXACT_TIMING=1")
    check(SECTION not in text, "a sampled section under GPUTOOL_EXACT_TIMING=1")
    t = by_construct(p, "OMP_EXPLICIT_TASK_TIME")["tiny_tasks"]
    bounded(t, own["tiny"]["body_ns"], 4 * own["tiny"]["body_ns"] + 20e6, "tiny tasks' time")


CALIBRATE = 64  # tasks timed to judge a construct (ompt/ompt-internal.h)


def test_held():
    # One thread runs each task as it creates it: the tiny construct's
    # first 64 tasks are the ones judged. 24 held up (50 us each, ten
    # times the threshold) leave its median short: sampled. (Their mean,
    # even at most four thresholds each, would have made it exact.) 40
    # make the median long: every task timed. The margins, 8 tasks either
    # way, are for tiny tasks a loaded machine holds up too.
    env = dict(ENV, OMP_NUM_THREADS="1")
    held = CALIBRATE // 2 - 8
    p, own, text = run_tool({}, dict(env, HELD_UP=str(held)))
    check_counts(p)
    check_samples_in_tasks(p)
    samples = by_construct(p, "OMP_TASK_TIME_SAMPLES").get("tiny_tasks", 0)
    want = (TINY_N - CALIBRATE + SAMPLE_EVERY - 1) // SAMPLE_EVERY
    check(samples == want, "%d held-up tasks of %d: %d tiny tasks timed as samples, want %d" %
          (held, CALIBRATE, samples, want))
    tiny = own["tiny"]
    t = by_construct(p, "OMP_EXPLICIT_TASK_TIME")["tiny_tasks"]
    bounded(t, 0.25 * (tiny["body_ns"] - tiny["max_ns"]), 4 * tiny["body_ns"] + SAMPLE_EVERY * tiny["max_ns"],
            "tiny tasks' estimated time")
    check(SECTION in text and "tiny_tasks" in text[text.index(SECTION):].split("\n\n")[0],
          "the held-up construct is not listed as sampled")
    held = CALIBRATE // 2 + 8
    p, own, text = run_tool({}, dict(env, HELD_UP=str(held)))
    check_counts(p)
    check(by_construct(p, "OMP_TASK_TIME_SAMPLES").get("tiny_tasks", 0) == 0,
          "%d held-up tasks of %d: the construct was sampled, want every task timed" % (held, CALIBRATE))


def test_shared():
    # Each of 2 threads creates 40 tiny tasks of split_tasks and waits for
    # each: 80 in all, fewer than 64 on either thread. The construct's
    # first 64 tasks in the process judge it sampled; of the 16 after them
    # each thread times its first, so 1 or 2 are timed as samples (none,
    # were each thread to judge by its own 64).
    split = 40
    p, own, text = run_tool({}, dict(ENV, SPLIT_TASKS=str(split)))
    check_counts(p)
    tasks = by_construct(p, "OMP_EXPLICIT_TASKS").get("split_tasks", 0)
    check(tasks == 2 * split, "split_tasks: %d tasks, want %d" % (tasks, 2 * split))
    samples = by_construct(p, "OMP_TASK_TIME_SAMPLES").get("split_tasks", 0)
    check(1 <= samples <= 2, "split_tasks: %d tasks timed as samples, want 1 or 2" % samples)
    check(SECTION in text and "split_tasks" in text[text.index(SECTION):].split("\n\n")[0],
          "split_tasks is not listed as sampled")


def test_many():
    # One thread meets 72 constructs of 200 tiny tasks each, one after
    # another: more than it keeps judgements of (OMP_TIME_SITES, 64). Every
    # one is judged by its first 64 tasks and sampled: of the 136 after
    # them, 8 or 9 are timed (one in 16 from a phase the thread picks).
    many, n = 72, 200
    p, own, text = run_tool({}, dict(ENV, OMP_NUM_THREADS="1", MANY_TASKS=str(n)))
    check_counts(p)
    tasks = by_construct(p, "OMP_EXPLICIT_TASKS")
    samples = by_construct(p, "OMP_TASK_TIME_SAMPLES")
    names = ["many_%d" % k for k in range(many)]
    check(all(tasks.get(k) == n for k in names),
          "tasks by construct: %s" % {k: tasks.get(k) for k in names if tasks.get(k) != n})
    lo, hi = (n - CALIBRATE) // SAMPLE_EVERY, (n - CALIBRATE + SAMPLE_EVERY - 1) // SAMPLE_EVERY
    off = {k: samples.get(k, 0) for k in names if not lo <= samples.get(k, 0) <= hi}
    check(not off, "constructs not sampled as %d to %d tasks timed: %s" % (lo, hi, off))


WAIT_SECTION = "Task waits timed by sampling"


def split_waits(p):
    """The <omp taskwait> nodes of split_tasks."""
    return [w for w in p.find("<omp taskwait>") if frame_functions(p, w)[-1:] == ["split_tasks"]]


def test_waits():
    # Each of 2 threads creates 2,000 tiny tasks at split_tasks and waits
    # for each at once. The taskwait's first 64 waits in the process judge
    # it: short, so a thread then times one wait in 16, drawn at random.
    # Counts stay exact; the timed ones (binomial, p = 1/16) within 5
    # standard deviations of their mean.
    split = 2000
    env = dict(ENV, SPLIT_TASKS=str(split))
    p, own, text = run_tool({}, env)
    check_counts(p)
    waits = split_waits(p)
    count = sum(p.excl(w, "OMP_WAIT_COUNT") for w in waits)
    check(count == 2 * split, "split_tasks' taskwaits: %d counted, want %d" % (count, 2 * split))
    samples = sum(p.excl(w, "OMP_WAIT_TIME_SAMPLES") for w in waits)
    n = 2 * split - CALIBRATE
    mean, sd = n / SAMPLE_EVERY, (n * (1 / SAMPLE_EVERY) * (1 - 1 / SAMPLE_EVERY)) ** 0.5
    check(mean - 5 * sd <= samples <= mean + 5 * sd + CALIBRATE,
          "split_tasks' taskwaits: %d timed as samples, want %.0f +- %.0f" % (samples, mean, 5 * sd))
    # The estimate against the waits' wall time as the program measured
    # it: each timed wait stands for 16, so one the machine held up weighs
    # 16 times; the tasks a wait ran are taken out of it where timed.
    est = sum(p.excl(w, "OMP_WAIT") for w in waits)
    wall = own["split_wait"]
    print("  split_tasks' taskwaits: %d timed of %d; estimate %.2f ms, their wall time %.2f ms (longest %.3f ms)" %
          (samples, count, est / 1e6, wall["body_ns"] / 1e6, wall["max_ns"] / 1e6))
    bounded(est, 0.25 * (wall["body_ns"] - SAMPLE_EVERY * wall["max_ns"]) - own["split"]["body_ns"],
            4 * wall["body_ns"] + SAMPLE_EVERY * wall["max_ns"], "split_tasks' estimated wait time")
    check(WAIT_SECTION in text and "split_tasks" in text[text.index(WAIT_SECTION):].split("\n\n")[0],
          "split_tasks' taskwait is not listed as sampled:\n%s" % text[-3000:])
    # Every wait timed under GPUTOOL_EXACT_TIMING=1.
    p, own, text = run_tool({"GPUTOOL_EXACT_TIMING": "1"}, env)
    waits = split_waits(p)
    check(sum(p.excl(w, "OMP_WAIT_COUNT") for w in waits) == 2 * split, "taskwaits counted under exact timing")
    check(p.total("OMP_WAIT_TIME_SAMPLES") == 0 and WAIT_SECTION not in text,
          "taskwaits sampled under GPUTOOL_EXACT_TIMING=1")


def test_waited():
    # Thread 0 waits about 170 ms in a taskwait while thread 1 runs the
    # task, spinning (active wait policy): the CPU time it spends there is
    # sampled under its <omp taskwait>, though libomp keeps its state at
    # work_parallel. A loaded machine may not run the spinning thread: the
    # run is taken again (up to 3 times) where it had under 50 ms of CPU
    # time in the wait.
    env = dict(ENV, OMP_WAIT_POLICY="active", WAITED_MS="200")
    for attempt in range(3):
        p, own, text = run_tool({}, env)
        cpu = own["wait"]["cpu_ns"]
        if cpu >= 50e6:
            break
        print("  the waiting thread ran %.1f ms in its taskwait: again" % (cpu / 1e6))
    check(cpu >= 50e6, "the waiting thread never ran 50 ms in its taskwait: %.1f ms" % (cpu / 1e6))
    waits = [w for w in p.find("<omp taskwait>") if frame_functions(p, w)[-1:] == ["waiter"]]
    check(len(waits) == 1, "waiter's <omp taskwait>: %d nodes" % len(waits))
    w = waits[0]
    check(p.excl(w, "OMP_WAIT_COUNT") == 1, "waiter's taskwait count %d" % p.excl(w, "OMP_WAIT_COUNT"))
    sampled = p.incl(w, "CPUTIME")
    # The waiter's own frame, but for its taskwait: its 30 ms spin.
    site = p.nodes[w["parent"]]
    beside = p.incl(site, "CPUTIME") - sampled
    print("  taskwait: %.1f ms of CPU time sampled under it, %.1f ms spent there; %.1f ms beside it" %
          (sampled / 1e6, cpu / 1e6, beside / 1e6))
    check(sampled >= 0.5 * cpu - 2 * p.sample_weight(),
          "%.1f ms sampled under <omp taskwait>, the thread spent %.1f ms there" % (sampled / 1e6, cpu / 1e6))


def test_tsan():
    # Every task created by one thread and run by any of 8: each record is
    # made by the thread that starts its task, from the creator's tagged
    # node; the tiny tasks' construct is sampled, the long ones' is not.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from test_tasks_mix import TSAN_OPTIONS  # noqa: E402
    env = dict(ENV, OMP_NUM_THREADS="8", TSAN_OPTIONS=TSAN_OPTIONS)
    p, _, _ = run_tool({}, env)
    check_counts(p)


if __name__ == "__main__":
    main({"sampled": [("long tasks timed each, tiny ones sampled", test_sampled)],
          "exact": [("GPUTOOL_EXACT_TIMING=1: every task timed", test_exact)],
          "held": [("a construct's judgement is its first tasks' median", test_held)],
          "shared": [("a construct is judged by its first tasks in the process", test_shared)],
          "many": [("more constructs than a thread keeps, each sampled", test_many)],
          "waits": [("a construct of very short taskwaits sampled, counts exact", test_waits)],
          "waited": [("a taskwait's CPU samples under its <omp taskwait>", test_waited)],
          "tsan": [("no data race in the tool (ThreadSanitizer)", test_tsan)]}[MODE])
