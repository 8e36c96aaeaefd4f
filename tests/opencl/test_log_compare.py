# SPDX-License-Identifier: MIT
"""What the application called is what reached the driver, in the style of
the Khronos ICD loader's tests: a logging layer above gputool records the
application's calls, a second one below records what gputool passed on:

    OPENCL_LAYERS=liboclog_drv.so:libgputool.so:liboclog_app.so ./sample

Every application call must reach the driver, in order, with the same
arguments and result, except for what gputool documents (docs/OPENCL.md):

  - queues get CL_QUEUE_PROFILING_ENABLE (and a CL_QUEUE_PROPERTIES entry);
  - a command enqueued without an event gets one, which is gputool's: it gets
    a completion callback and is released exactly once, and the application
    never sees it;
  - a profiling query on a queue that profiles for gputool only, and the
    properties array of such a queue, are answered by gputool (the answer is
    the one the application would get without it: the samples print them,
    and test_opencl.py compares their output);
  - reading a queue's CL_QUEUE_PROPERTIES shows the bits the application set.

Anything else gputool sends down must be a query that changes nothing.
Usage: test_log_compare.py BUILD_DIR LOG_APP_SO LOG_DRV_SO  (77: no OpenCL)"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from gtrun import Fail, check, main  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
LOG_APP, LOG_DRV = os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
LIB = os.path.join(BUILD, "libgputool.so")
SAMPLES = os.path.join(BUILD, "samples", "opencl")
PROFILING = 2
QUEUE_PROPERTIES = "0x1093"
QUEUE_PROPERTIES_ARRAY = "0x1098"
QUERIES = {"clGetPlatformIDs", "clGetDeviceIDs", "clGetDeviceInfo", "clGetContextInfo",
           "clGetCommandQueueInfo", "clGetMemObjectInfo", "clGetProgramInfo", "clGetKernelInfo",
           "clGetKernelArgInfo", "clGetEventInfo", "clGetEventProfilingInfo",
           "clGetDeviceAndHostTimer", "clGetHostTimer"}
EV = re.compile(r"ev=(\S+)")


def parse(path):
    out = []
    for line in open(path):
        tid, fn, rest = (line.rstrip("\n").split(" ", 2) + [""])[:3]
        out.append((tid, fn, rest))
    return out


def props_with_profiling(s):
    """A clCreateCommandQueueWithProperties property list, as gputool sends it."""
    pairs = [] if s in ("null", "[]") else [p.split(":") for p in s.split(",")]
    for p in pairs:
        if p[0] == "4243":
            p[1] = str(int(p[1]) | PROFILING)
            break
    else:
        pairs.append(["4243", str(PROFILING)])
    return ",".join(":".join(p) for p in pairs)


def expected_down(fn, rest):
    """What the driver should see for an application call: (pattern, internal
    event expected). None in the pattern's event position means "any"."""
    if fn == "clCreateCommandQueue":
        a = rest.split(" ")
        a[2] = str(int(a[2]) | PROFILING)
        return " ".join(a), False
    if fn == "clCreateCommandQueueWithProperties":
        a = rest.split(" ")
        a[2] = props_with_profiling(a[2])
        return " ".join(a), False
    m = EV.search(rest)
    if m and m.group(1) == "-" and fn.startswith("clEnqueue") and not rest.endswith("-> (nil)") and \
            not re.search(r"-> -\d+$", rest):
        return rest, True
    return rest, False


def matches(fn, rest, afn, arest):
    if fn != afn:
        return None
    want, internal = expected_down(afn, arest)
    if internal:
        m = EV.search(rest)
        if not m or m.group(1) == "-" or EV.sub("ev=?", rest) != EV.sub("ev=?", want):
            return None
        return m.group(1)
    if afn == "clGetCommandQueueInfo" and rest.split(" ")[1] == QUEUE_PROPERTIES:
        a, d = arest.split(" "), rest.split(" ")
        if a[:4] == d[:4] and a[3] == "0" and int(d[4]) in (int(a[4]), int(a[4]) | PROFILING):
            return ""
        return None
    return "" if rest == want else None


def hidden(fn, rest):
    """Application calls gputool may answer itself."""
    if fn == "clGetEventProfilingInfo" and rest.endswith("-> -7"):
        return True
    return fn == "clGetCommandQueueInfo" and rest.split(" ")[1] == QUEUE_PROPERTIES_ARRAY


def compare(app, drv):
    """Returns (application calls, calls gputool added); raises Fail."""
    main_tid = app[0][0]
    i, added, live, last_event = 0, 0, set(), {}
    for tid, fn, rest in drv:
        if tid == main_tid and i < len(app):
            ev = matches(fn, rest, app[i][1], app[i][2])
            j = i
            while ev is None and j + 1 < len(app) and hidden(app[j][1], app[j][2]):
                j += 1
                ev = matches(fn, rest, app[j][1], app[j][2])
                if ev is not None:
                    i = j
            if ev is not None:
                i += 1
                if ev:
                    check(ev not in live, "internal event %s handed out twice" % ev)
                    live.add(ev)
                m = EV.search(rest)
                if m and m.group(1) != "-":
                    last_event[tid] = m.group(1)
                continue
        added += 1
        if fn in QUERIES:
            continue
        handle = rest.split(" ")[0]
        if fn == "clSetEventCallback":
            check(handle == last_event.get(tid) or handle in live,
                  "callback set on %s, not on the command just enqueued" % handle)
            continue
        if fn == "clReleaseEvent":
            check(handle in live, "released %s, not an event of gputool's" % handle)
            live.discard(handle)
            continue
        raise Fail("%s %s reached the driver, the application did not call it (next: %s)"
                   % (fn, rest, " ".join(app[i][1:]) if i < len(app) else "end"))
    while i < len(app) and hidden(app[i][1], app[i][2]):
        i += 1
    check(i == len(app), "application call %s %s never reached the driver" % app[i][1:] if i < len(app) else "")
    check(not live, "%d events of gputool's never released: %s" % (len(live), sorted(live)[:5]))
    return len(app), added


def run_logged(sample, env):
    d = tempfile.mkdtemp(prefix="gputool-oclog-")
    e = {k: v for k, v in os.environ.items() if not k.startswith("GPUTOOL_") and k != "OPENCL_LAYERS"}
    e.update(env)
    e.update(GT_OCLLOG_APP=os.path.join(d, "app.log"), GT_OCLLOG_DRV=os.path.join(d, "drv.log"),
             GPUTOOL_OUTPUT=os.path.join(d, "out"), OPENCL_LAYERS="%s:%s:%s" % (LOG_DRV, LIB, LOG_APP))
    p = subprocess.run([os.path.join(SAMPLES, sample)], env=e, capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, "%s failed: %s" % (sample, p.stderr))
    check(os.path.isdir(os.path.join(d, "out")), "%s: gputool did not run between the layers" % sample)
    return parse(os.path.join(d, "app.log")), parse(os.path.join(d, "drv.log"))


def case(sample, env):
    def fn():
        app, drv = run_logged(sample, env)
        check(app, "%s: the application layer logged nothing" % sample)
        n, added = compare(app, drv)
        print("     %s: %d application calls, %d added by gputool" % (sample, n, added))
    return fn


def test_self_check():
    """The comparison catches what it is for."""
    app = [("1", "clFinish", "0xq -> 0"), ("1", "clEnqueueNDRangeKernel", "0xq 0xk 1 8 0 ev=- -> 0")]
    good = [("1", "clFinish", "0xq -> 0"), ("1", "clEnqueueNDRangeKernel", "0xq 0xk 1 8 0 ev=0xe -> 0"),
            ("1", "clSetEventCallback", "0xe 0"), ("2", "clGetEventProfilingInfo", "0xe 0x1282 -> 0"),
            ("1", "clReleaseEvent", "0xe -> 0")]
    compare(app, good)
    for bad in (good[1:], good[:-1], good[:2] + [("1", "clFlush", "0xq -> 0")] + good[2:],
                [good[0], ("1", "clEnqueueNDRangeKernel", "0xq 0xk 1 16 0 ev=0xe -> 0")] + good[2:]):
        try:
            compare(app, bad)
        except Fail:
            continue
        raise Fail("a wrong driver log passed: %s" % bad)


if __name__ == "__main__":
    probe = subprocess.run([os.path.join(SAMPLES, "counts")], capture_output=True, text=True)
    if probe.returncode != 0 and "clGetPlatformIDs" in probe.stderr:
        print("no OpenCL platform: skipped")
        sys.exit(77)
    two = {"POCL_DEVICES": "pthread pthread"}
    main([("the comparison itself", test_self_check),
          ("counts: the driver got what the application called", case("counts", two)),
          ("advice: the driver got what the application called", case("advice", two)),
          ("events: the driver got what the application called", case("events", {}))])
