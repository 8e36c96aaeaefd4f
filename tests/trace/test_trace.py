# SPDX-License-Identifier: MIT
"""Traces end to end: a program run with GPUTOOL_TRACE=1 leaves a .gttrace
next to its profile, and `gputool report DIR --format chrome` turns it into
Chrome trace-event JSON with the spans the program is known to have.
Usage: test_trace.py BUILD_DIR omp|opencl  (exit 77: no OpenCL platform)"""
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from gtrun import Fail, check, main, run, run_under_tool  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
LIB = os.path.join(BUILD, "libgputool.so")
GPUTOOL = os.path.join(BUILD, "gputool")
SPLIT = os.path.join(BUILD, "samples", "omp-host", "split")
COUNTS = os.path.join(BUILD, "samples", "opencl", "counts")
ITERS = 20  # samples/omp-host/split.c


def chrome(outdir):
    code, js, err = run([GPUTOOL, "report", outdir, "--format", "chrome"])
    check(code == 0, "report --format chrome failed (%d): %s" % (code, err))
    try:
        return json.loads(js)["traceEvents"], err
    except ValueError as e:
        raise Fail("not JSON: %s" % e)


def ns(us):
    return int(round(float(us) * 1000))


def spans(events):
    return [e for e in events if e["ph"] == "X"]


def track_names(events):
    return {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}


def base(e):
    """A CPU slice's name without the place it was ("omp parallel @ compute (split.c:54)")."""
    return e["name"].split(" @ ")[0]


def check_nesting(events):
    """On every track, two spans are disjoint or one holds the other."""
    by_tid = collections.defaultdict(list)
    for e in spans(events):
        by_tid[e["tid"]].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]))
    for tid, ss in by_tid.items():
        stack = []
        for s, end, name in sorted(ss, key=lambda x: (x[0], -x[1])):
            while stack and stack[-1][1] <= s:
                stack.pop()
            check(not stack or end <= stack[-1][1],
                  "track %s: %s [%d, %d] overlaps %s [%d, %d]" % (tid, name, s, end, *stack[-1][2:], *stack[-1][:2])
                  if stack else "")
            stack.append((s, end, name))


def traced_split(extra_env=None):
    env = dict({"OMP_NUM_THREADS": "2", "GPUTOOL_TRACE": "1"}, **(extra_env or {}))
    outdir, _ = run_under_tool(LIB, SPLIT, ["1000000"], env=env)
    return outdir


def test_omp_regions():
    outdir = traced_split()
    events, _ = chrome(outdir)
    names = track_names(events)
    cpu = [t for t, n in names.items() if n.startswith("CPU thread")]
    check(len(cpu) == 2 and len(names) == 2, "tracks: %s" % names)
    par = collections.Counter()
    for e in spans(events):
        check(e["tid"] in cpu, "span on an unknown track: %s" % e)
        if base(e) == "omp parallel":
            caller = "heavy" if "heavy" in e["args"]["context"] else "light" if "light" in e["args"]["context"] else "?"
            par[caller] += 1
            check(e["name"].startswith("omp parallel @ compute (split.c:"), "a region not named by its site: %s" %
                  e["name"])
    check(par == {"heavy": ITERS, "light": ITERS}, "parallel regions per call site: %s" % dict(par))
    tasks = collections.Counter(e["tid"] for e in spans(events) if base(e) == "omp implicit task")
    check(sorted(tasks.values()) == [2 * ITERS, 2 * ITERS], "implicit tasks per thread: %s" % dict(tasks))
    check_nesting(events)
    shutil.rmtree(outdir)


def test_cut_short():
    outdir = traced_split()
    full, _ = chrome(outdir)
    trace = [os.path.join(outdir, f) for f in os.listdir(outdir) if f.endswith(".gttrace")]
    check(len(trace) == 1, "trace files: %s" % trace)
    size = os.path.getsize(trace[0])
    for cut in (size - 1, size // 2, 16):
        with open(trace[0], "r+b") as f:
            f.truncate(cut)
        events, err = chrome(outdir)
        check("the events before it are shown" in err, "cut at %d: no note: %r" % (cut, err))
        check(len(spans(events)) <= len(spans(full)), "cut at %d: more events than whole" % cut)
        if cut == size - 1:  # only END is lost
            check(len(spans(events)) == len(spans(full)), "cut before END: events lost")
    shutil.rmtree(outdir)


def test_off():
    for env in ({}, {"GPUTOOL_TRACE": "0"}):
        outdir, _ = run_under_tool(LIB, SPLIT, ["100000"], env=dict(env, OMP_NUM_THREADS="2"))
        files = os.listdir(outdir)
        check(any(f.endswith(".gtprof") for f in files), "no profile: %s" % files)
        check(not any(f.endswith(".gttrace") for f in files), "trace written with tracing off: %s" % files)
        code, _, err = run([GPUTOOL, "report", outdir, "--format", "chrome"])
        check(code == 1 and "no trace recorded" in err, "report without trace: %d %r" % (code, err))
        shutil.rmtree(outdir)


def test_opencl_flows():
    outdir = tempfile.mkdtemp(prefix="gputool-trace-")
    code, _, err = run([COUNTS], env={"POCL_DEVICES": "pthread pthread", "OPENCL_LAYERS": LIB,
                                      "GPUTOOL_OUTPUT": outdir, "GPUTOOL_TRACE": "1"})
    check(code == 0, "counts failed: %s" % err)
    events, _ = chrome(outdir)
    names = track_names(events)
    gpu = {t for t, n in names.items() if not n.startswith("CPU thread")}
    check(gpu, "no device track: %s" % names)
    # PoCL's pthread devices are CPUs: their tracks say so.
    check(all(names[t].startswith("OpenCL CPU ") and " queue " in names[t] for t in gpu),
          "device tracks: %s" % sorted(names[t] for t in gpu))
    launches = {e["args"]["correlation"]: e for e in spans(events)
                if e["tid"] not in gpu and e["cat"] == "api" and base(e) == "<gpu kernel>"}
    kernels = [e for e in spans(events) if e["cat"] == "kernel"]
    check(all(k["tid"] in gpu for k in kernels), "a kernel off the GPU tracks")
    # samples/opencl/counts.c: 41 kernels (tests/opencl/test_opencl.py).
    check(len(kernels) == len(launches) == 41, "%d kernels, %d launches" % (len(kernels), len(launches)))
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    flows = {(e["tid"], ns(e["ts"])): starts.get(e["id"]) for e in events if e["ph"] == "f"}
    for k in kernels:
        launch = launches.get(k["args"].get("correlation"))
        check(launch is not None, "kernel without its launch: %s" % k)
        s = flows.get((k["tid"], ns(k["ts"])))
        check(s is not None and s["tid"] == launch["tid"] and ns(s["ts"]) == ns(launch["ts"]),
              "kernel without a flow from its launch: %s" % k)
        check(ns(launch["ts"]) <= ns(k["ts"]), "kernel before its launch: %s" % k)
    check_nesting([e for e in events if e.get("tid") not in gpu])
    shutil.rmtree(outdir)


def opencl_present():
    code, _, err = run([COUNTS])
    return code == 0 or "clGetPlatformIDs" not in err


if __name__ == "__main__":
    if sys.argv[2] == "opencl":
        if not os.path.exists(COUNTS) or not opencl_present():
            print("no OpenCL platform: skipped")
            sys.exit(77)
        main([("OpenCL: device queue tracks named by device, a flow from each launch to its kernel", test_opencl_flows)])
    main([("OpenMP regions and implicit tasks per thread and call site", test_omp_regions),
          ("a trace cut short still reads", test_cut_short),
          ("tracing off: no trace file", test_off)])
