# SPDX-License-Identifier: MIT
"""The OpenCL layer end to end: the samples in samples/opencl run bare and
under OPENCL_LAYERS=libgputool.so on the machine's OpenCL platform (PoCL in
CI); their output must not change, and the profile must hold exactly what
they are known to do, where they do it.
Usage: test_opencl.py BUILD_DIR  (exit 77: no OpenCL platform, skipped)"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "analysis"))
from gtrun import bounded, Fail, check, main, profiles, run  # noqa: E402
import dup_rows  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
LIB = os.path.join(BUILD, "libgputool.so")
GPUTOOL = os.path.join(BUILD, "gputool")
SAMPLES = os.path.join(BUILD, "samples", "opencl")
# PoCL's CPU driver, twice: a platform with two devices.
TWO = {"POCL_DEVICES": "pthread pthread"}
ADVICE = ["SINGLE_DEVICE_USE_AOT_COMPILATION", "OUTPUT_OF_KERNEL_INPUT_TO_ANOTHER_KERNEL",
          "KERNEL_PARAMS_NOT_ALIASED", "KERNEL_TO_MULTIPLE_QUEUES_MULTIPLE_CONTEXTS",
          "INORDER_QUEUE", "ALL_DEVICES_NOT_USED"]
RUNTIME_MODULES = ("libOpenCL", "libpocl", "libgputool", "liboclog")


def clean_env(env):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("GPUTOOL_") and k not in ("OPENCL_LAYERS", "POCL_DEVICES", "OMP_TOOL_LIBRARIES")}
    e.update(env or {})
    return e


def run_env(cmd, env):
    p = subprocess.run(cmd, env=clean_env(env), capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def run_both(sample, env=None):
    """Runs a sample bare and under the layer; checks exit code and stdout
    are the same; returns (profile, stderr of the bare run, of the tool run)."""
    exe = os.path.join(SAMPLES, sample)
    code0, out0, err0 = run_env([exe], env)
    check(code0 == 0, "%s failed bare (%d): %s" % (sample, code0, err0))
    outdir = tempfile.mkdtemp(prefix="gputool-ocl-")
    code1, out1, err1 = run_env([exe], dict(env or {}, OPENCL_LAYERS=LIB, GPUTOOL_OUTPUT=outdir))
    check(code1 == code0, "%s exit code changed: %d vs %d (%s)" % (sample, code0, code1, err1))
    check(out0 == out1, "%s stdout changed:\n%s\nvs\n%s" % (sample, out0, out1))
    lines = [l for l in err1.splitlines() if l.startswith("gputool")]
    check(len(lines) == 1 and lines[0].startswith("gputool: report "),
          "%s: expected one gputool line on stderr, got %r" % (sample, err1))
    ps = profiles(GPUTOOL, outdir)
    check(len(ps) == 1, "expected one profile in %s, found %d" % (outdir, len(ps)))
    return ps[0], err0, err1


def funcs(p, node):
    """Function names of the frames on node's path, outermost first."""
    return [n.get("name") or "?" for n in p.path(node) if n.get("kind") == "frame"]


def nodes_with(p, metric):
    return [n for n in p.doc["nodes"] if p.excl(n, metric)]


def total(p, metric, pred=lambda n: True):
    return sum(p.excl(n, metric) for n in p.doc["nodes"] if pred(n))


def in_func(p, name):
    return lambda n: name in funcs(p, n)


def no_runtime_frames(p):
    mods = p.doc.get("modules", [])
    for n in p.doc["nodes"]:
        if n.get("kind") != "frame" or n.get("module") is None:
            continue
        m = os.path.basename(mods[n["module"]])
        # Samples may land in the runtime's compiler while it builds; the
        # calling contexts of GPU operations must not.
        if any(m.startswith(r) for r in RUNTIME_MODULES):
            kids = [c for c in p.doc["nodes"] if c.get("parent") == n["id"]]
            check(not any((c.get("name") or "").startswith("<gpu") for c in kids),
                  "runtime frame %s (%s) above a GPU operation" % (n.get("name"), m))


def advice_found(p):
    """{metric: {(innermost function, its caller, node name): value}}."""
    out = {}
    for m in ADVICE:
        for n in nodes_with(p, m):
            f = funcs(p, n)
            key = (f[-1] if f else "?", f[-2] if len(f) > 1 else "-", n.get("name") if n.get("kind") != "frame" else "")
            out.setdefault(m, {})
            out[m][key] = out[m].get(key, 0) + p.excl(n, m)
    return out


def check_advice(p, expected, what):
    found = advice_found(p)
    for m in ADVICE:
        check(found.get(m, {}) == expected.get(m, {}),
              "%s: %s found %s, expected %s" % (what, m, found.get(m, {}), expected.get(m, {})))


def test_counts():
    p, _, _ = run_both("counts", TWO)
    no_runtime_frames(p)
    kernels = [n for n in p.find("scale") if n.get("kind") == "name"]
    for caller, launches, nbytes in (("run_small", 30, 4096), ("run_big", 10, 262144)):
        ks = [n for n in kernels if caller in funcs(p, n)]
        check(len(ks) == 1, "%s: %d scale nodes" % (caller, len(ks)))
        f = funcs(p, ks[0])
        check(f[-3:] == ["main", caller, "run_scale"], "%s: kernel context %s" % (caller, f))
        check(p.names(ks[0])[-2:] == ["<gpu kernel>", "scale"], "kernel under %s" % p.names(ks[0]))
        check(p.excl(ks[0], "GKER_COUNT") == launches, "%s launches %d" % (caller, p.excl(ks[0], "GKER_COUNT")))
        check(p.excl(ks[0], "GKER") > 0, "%s: no kernel time" % caller)
        for d in ("H2D", "D2H"):
            ph = [n for n in p.find("<gpu copy %s>" % d.lower()) if caller in funcs(p, n)]
            check(len(ph) == 1, "%s: %d %s nodes" % (caller, len(ph), d))
            check(p.excl(ph[0], "GXCOPY_%s_BYTES" % d) == nbytes and p.excl(ph[0], "GXCOPY_%s_COUNT" % d) == 1,
                  "%s %s: %d bytes, %d copies" % (caller, d, p.excl(ph[0], "GXCOPY_%s_BYTES" % d),
                                                 p.excl(ph[0], "GXCOPY_%s_COUNT" % d)))
        check(total(p, "GSYNC_COUNT", in_func(p, caller)) == 3, "%s: waits" % caller)
    o = in_func(p, "other_ops")
    for metric, want in (("GMSET_BYTES", 4096), ("GMSET_COUNT", 1),
                         ("GXCOPY_D2D_BYTES", 4096 + 256), ("GXCOPY_D2D_COUNT", 2),
                         ("GXCOPY_D2H_BYTES", 256 + 4096 + 2048 + 4096 + 4096), ("GXCOPY_D2H_COUNT", 5),
                         ("GXCOPY_H2D_BYTES", 256 + 0 + 2048), ("GXCOPY_H2D_COUNT", 3),
                         ("GKER_COUNT", 1), ("GSYNC_COUNT", 7 + 5)):
        check(total(p, metric, o) == want, "other_ops %s = %d, expected %d" % (metric, total(p, metric, o), want))
    one = [n for n in p.find("one") if n.get("kind") == "name"]
    check(len(one) == 1 and p.excl(one[0], "GKER_COUNT") == 1, "task: %s" % one)
    # Nothing else anywhere.
    for metric, want in (("GKER_COUNT", 41), ("GXCOPY_H2D_COUNT", 5), ("GXCOPY_D2H_COUNT", 7),
                         ("GXCOPY_H2D_BYTES", 4096 + 262144 + 2304),
                         ("GXCOPY_D2H_BYTES", 4096 + 262144 + 14592), ("GJIT_COUNT", 1), ("GSYNC_COUNT", 18)):
        check(total(p, metric) == want, "%s = %d, expected %d" % (metric, total(p, metric), want))
    for ph in p.find("<gpu jit>"):
        check(funcs(p, ph) == ["main"], "build at %s" % funcs(p, ph))
    check_advice(p, {}, "counts (nothing to advise)")


EXPECTED_ADVICE = {
    "ALL_DEVICES_NOT_USED": {("make_context_one", "main", ""): 1,
                             ("make_context_one", "run_in_second_context", ""): 1},
    "SINGLE_DEVICE_USE_AOT_COMPILATION": {("build", "main", "<gpu jit>"): 1,
                                          ("build", "run_in_second_context", "<gpu jit>"): 1},
    "INORDER_QUEUE": {("make_inorder_queue", "main", ""): 1},
    "KERNEL_PARAMS_NOT_ALIASED": {("dispatch_distinct", "main", "add"): 3,
                                  ("dispatch_sub_disjoint", "main", "pair"): 1},
    "KERNEL_TO_MULTIPLE_QUEUES_MULTIPLE_CONTEXTS": {("run_in_second_context", "main", "add"): 1},
    "OUTPUT_OF_KERNEL_INPUT_TO_ANOTHER_KERNEL": {("resend_unchanged", "main", "<gpu copy h2d>"): 1,
                                                 ("resend_async", "main", "<gpu copy h2d>"): 1,
                                                 ("resend_create", "main", ""): 1},
}


def test_advice_two_devices():
    p, _, _ = run_both("advice", TWO)
    no_runtime_frames(p)
    check_advice(p, EXPECTED_ADVICE, "advice, two devices")
    d = p.meta("output_dir")
    report = open(os.path.join(d, [f for f in os.listdir(d) if f.endswith(".txt")][0])).read()
    nxt = report[report.index("What to do next"):] if "What to do next" in report else ""
    check("declared restrict" in nxt and "resend_unchanged" in nxt and "compile ahead of time" in nxt,
          "text report lacks the OpenCL checks in what to do next")
    # GPU operations at a narrow width: every line fits, each kernel keeps
    # its name and its launch site's line, and no two rows read the same.
    width = 120
    code, text, err = run_env([GPUTOOL, "report", d, "--width", str(width)], None)
    check(code == 0, "gputool report --width %d: %s" % (width, err))
    wide = dup_rows.too_wide(text, width)
    check(not wide, "lines wider than %d: %s" % (width, ["%d: %s" % (n, text.splitlines()[n - 1]) for n, _ in wide]))
    same = [x for x in dup_rows.duplicates(text) if x[0].startswith("GPU operations (")]
    check(not same, "GPU operations rows that read the same: %s" % same)
    ops = text[text.index("\nGPU operations ("):].split("\n\n")[0]
    check(re.search(r"kernel add +.*\(advice\.c:\d+\)", ops),
          "a kernel's row lacks its name or its launch line:\n" + ops)


def test_advice_one_device():
    p, _, _ = run_both("advice")
    expected = {k: v for k, v in EXPECTED_ADVICE.items() if k != "ALL_DEVICES_NOT_USED"}
    check_advice(p, expected, "advice, one device")


def own(err, key):
    """A figure the sample measured itself, from its "KEY N" line on stderr."""
    m = re.findall(r"^%s (\d+)$" % key, err, re.M)
    check(len(m) == 1, "expected one %r line on stderr, got %r" % (key, err))
    return int(m[0])


def test_events_and_kernel_time():
    p, err0, err1 = run_both("events")
    app = own(err1, "app-kernel-ns")
    plain, plain_cpu = own(err1, "app-plain-ns"), own(err1, "app-plain-cpu-ns")
    units = own(err1, "app-compute-units")
    busy = [n for n in p.find("busy") if n.get("kind") == "name"]
    timed = [n for n in busy if "timed_launches" in funcs(p, n)]
    check(len(timed) == 1 and p.excl(timed[0], "GKER_COUNT") == 20, "timed launches: %s" % timed)
    # The tool times the application's own events, whose START and END it
    # reads too: the same durations, to the nanosecond, however busy the
    # machine (the device-to-host offset cancels in END - START).
    ker = p.excl(timed[0], "GKER")
    check(ker == app, "kernel time %d ns, the application measured %d ns of its own events" % (ker, app))
    pl = sum(p.excl(n, "GKER") for n in busy if "plain_launches" in funcs(p, n))
    check(sum(p.excl(n, "GKER_COUNT") for n in busy if "plain_launches" in funcs(p, n)) == 5, "plain launches")
    # Unprofiled kernels, one after another on an in-order queue, ran within
    # the wall time the application waited for them; and on a CPU device the
    # CPU time its threads spent over that wait is at most compute units x
    # the time the kernels ran.
    check(units > 0, "compute units %d" % units)
    print("     plain launches: %.3f ms measured, the application waited %.3f ms, "
          "its device threads used %.3f ms of CPU on %d compute units" % (pl / 1e6, plain / 1e6, plain_cpu / 1e6, units))
    bounded(pl, plain_cpu / units, plain, "unprofiled kernel time")
    check_advice(p, {"SINGLE_DEVICE_USE_AOT_COMPILATION": {("main", "-", "<gpu jit>"): 1},
                     "INORDER_QUEUE": {("main", "-", ""): 2, ("array_queue", "main", ""): 1}},
                 "events")


def test_threads():
    p, _, _ = run_both("threads", TWO)
    bump = [n for n in p.find("bump") if n.get("kind") == "name"]
    check(len(bump) == 1, "bump nodes: %d" % len(bump))
    check(funcs(p, bump[0])[-1] == "worker", "launches at %s" % funcs(p, bump[0]))
    # Three threads, 10, 20 and 30 launches: the middle one is the sum less the others.
    per = p.per_thread(bump[0], "GKER_COUNT")
    check(per == (3, 10, 30, 60), "launches per thread (threads, min, max, sum) %s, expected 10, 20, 30" % (per,))
    check_advice(p, {}, "threads")


def test_disabled():
    exe = os.path.join(SAMPLES, "counts")
    outdir = tempfile.mkdtemp(prefix="gputool-ocl-off-")
    os.rmdir(outdir)
    code0, out0, _ = run_env([exe], TWO)
    code1, out1, err1 = run_env([exe], dict(TWO, OPENCL_LAYERS=LIB, GPUTOOL_OUTPUT=outdir, GPUTOOL_DISABLE="1"))
    check(code0 == code1 == 0 and out0 == out1, "disabled run differs: %s" % err1)
    check("gputool" not in err1 and not os.path.exists(outdir), "disabled tool wrote output: %r" % err1)


def test_loads_without_opencl():
    undefined = subprocess.run(["nm", "-D", "--undefined-only", LIB], capture_output=True, text=True).stdout
    if "__asan_" in undefined or "__tsan_" in undefined:
        print("     (a sanitizer build: the library loads only into sanitized programs)")
        return
    code, out, err = run_env([sys.executable, "-c",
                              "import ctypes,sys; ctypes.CDLL(sys.argv[1]);"
                              "print(any('libOpenCL' in l for l in open('/proc/self/maps')))", LIB],
                             {"GPUTOOL_DISABLE": "1"})
    check(code == 0 and out.strip() == "False", "loading libgputool.so: %s %s" % (out, err))


def test_launch_bound():
    """samples/opencl/launches on PoCL: 30,000 kernels of one work-group
    enqueued one by one, each shorter than the device's dispatch of the
    next; the same work as one kernel per step. Exact counts at both call
    sites; launch gaps at the chain's (its stream idled after kernels
    already enqueued: the machine's timing, so at least one, not a
    number); the launch-bound advice, if given, at the chain, or at both
    with the chain's the larger, each with the model's estimate from its
    own node's metrics."""
    p, _, err1 = run_both("launches")
    m = re.search(r"pair fuse slow_ms ([\d.]+) fast_ms ([\d.]+) speedup ([\d.]+)", err1)
    check(m, "the program's times: %s" % err1)
    links = [n for n in p.find("link_axpy") if n.get("kind") == "name"]
    fused = [n for n in p.find("chain_axpy") if n.get("kind") == "name"]
    check(len(links) == 1 and "step" in funcs(p, links[0]), "link_axpy under step(): %s" % links)
    check(len(fused) == 1 and "step_fused" in funcs(p, fused[0]), "chain_axpy under step_fused(): %s" % fused)
    lk, fk = links[0], fused[0]
    # Every command measured or said unmeasured, exactly: 30,030 kernels,
    # a fill and a read per side and round. A busy machine can starve the
    # monitor while 30,000 commands are enqueued: completions that come
    # before their correlation wait in a bounded pool, and what does not fit
    # is counted in the header as unmeasured, not lost silently.
    counts = ("GKER_COUNT", "GMSET_COUNT", "GXCOPY_H2D_COUNT", "GXCOPY_D2H_COUNT", "GXCOPY_D2D_COUNT",
              "GXCOPY_OTHER_COUNT")
    measured = sum(total(p, m) for m in counts)
    unmeasured = int(p.meta("ops_unmeasured") or 0)
    check(measured + unmeasured == 30030 + 12, "commands: %d measured + %d unmeasured, expected 30042" %
          (measured, unmeasured))
    nl, nf = p.excl(lk, "GKER_COUNT"), p.excl(fk, "GKER_COUNT")
    check(0 < nl <= 30000 and 0 < nf <= 30 and (unmeasured or (nl, nf) == (30000, 30)),
          "launches: %d and %d (%d unmeasured)" % (nl, nf, unmeasured))
    gaps, gap_ns = p.excl(lk, "GKER_LAUNCH_GAP_COUNT"), p.excl(lk, "GKER_LAUNCH_GAP")
    check(0 < gaps <= nl and gap_ns > 0, "launch gaps at the chain: %d (%d ns)" % (gaps, gap_ns))
    advice = [a for a in p.doc.get("advice", []) if a["kind"] == "launch-bound"]
    by_node = {a["node"]: a for a in advice}
    check(set(by_node) <= {lk["id"], fk["id"]}, "launch-bound advice only at the two kernels: %s" %
          [a["name"] for a in advice])
    # A machine starved while the fused kernel's 30 launches are issued
    # can leave its queue idle too, and its own gaps then earn it the
    # advice; the chain's, 30,000 kernels shorter than their dispatch,
    # stays the larger.
    if fk["id"] in by_node:
        check(lk["id"] in by_node and by_node[lk["id"]]["speedup"] > by_node[fk["id"]]["speedup"],
              "the chain's launch-bound advice above the fused kernel's: %s" %
              [(a["name"], a["speedup"]) for a in advice])
    for a in advice:
        k = lk if a["node"] == lk["id"] else fk
        g, n = p.excl(k, "GKER_LAUNCH_GAP"), p.excl(k, "GKER_LAUNCH_GAP_COUNT")
        busy = p.excl(k, "GKER") * n / p.excl(k, "GKER_COUNT")
        check(abs(a["speedup"] - (busy + g) / busy) <= 1e-6 * a["speedup"], "the model's estimate")
    advice = [by_node[lk["id"]]] if lk["id"] in by_node else []
    print("     %d of %d measured launches after an idle gap, %.2f us each; advice %s; the program measured fusion "
          "at %sx" % (gaps, nl, gap_ns / max(gaps, 1) / 1e3,
                      "%.2fx" % advice[0]["speedup"] if advice else "none", m.group(3)))


def test_serializing_waits():
    """samples/opencl/streams on PoCL: 30 times the host waits for queue 1
    and then feeds queue 2 (wait_first), and 30 times the reverse
    (wait_second): every one of those waits is followed by work on the other
    queue, exactly; the advice lists such a wait, without a gain (the device
    may have no room for both, and on PoCL's CPU device it has none)."""
    p, _, err1 = run_both("streams")
    check(re.search(r"pair overlap slow_ms", err1), "the program's times: %s" % err1)
    waits = {}
    for n in p.find("<gpu sync>"):
        f = funcs(p, n)
        if f and f[-1] in ("wait_first", "wait_second"):
            waits[f[-1]] = n
    check(set(waits) == {"wait_first", "wait_second"}, "the two waits: %s" % list(waits))
    # Exactly, unless the machine starved the monitor of room (commands said
    # unmeasured in the header): then none more than the waits.
    unmeasured = int(p.meta("ops_unmeasured") or 0)
    for name, n in sorted(waits.items()):
        serial = p.excl(n, "GSYNC_SERIAL_COUNT")
        check(p.excl(n, "GSYNC_COUNT") == 30 and (serial == 30 or (unmeasured and 0 < serial <= 30)) and
              p.excl(n, "GSYNC_SERIAL") > 0,
              "%s: 30 waits, each followed by work on the other queue (%d, %d; %d unmeasured)" %
              (name, p.excl(n, "GSYNC_COUNT"), serial, unmeasured))
    advice = [a for a in p.doc.get("advice", []) if a["kind"] == "serializing-sync"]
    check(any(a["node"] == waits["wait_first"]["id"] for a in advice), "serializing-sync at wait_first: %s" %
          [a.get("at") for a in advice])
    check(all(a["saved_ns"] == 0 for a in advice), "no gain estimated")
    m = re.search(r"speedup ([\d.]+)", err1)
    print("     the program measured feeding both queues first at %sx" % (m.group(1) if m else "?"))


def platform_present():
    code, _, err = run_env([os.path.join(SAMPLES, "counts")], None)
    return code == 0 or "clGetPlatformIDs" not in err


if __name__ == "__main__":
    if not platform_present():
        print("no OpenCL platform: skipped")
        sys.exit(77)
    main([("counts and bytes per calling context", test_counts),
          ("each check fires where planted and nowhere else (two devices)", test_advice_two_devices),
          ("the same on one device", test_advice_one_device),
          ("the application's events, callbacks and profiling queries; kernel time", test_events_and_kernel_time),
          ("three threads, each its own queue: launches per thread", test_threads),
          ("tiny kernels one by one, then fused: launch gaps and their advice", test_launch_bound),
          ("waits for one queue before feeding the other: counted, advised", test_serializing_waits),
          ("GPUTOOL_DISABLE=1 passes everything through", test_disabled),
          ("the library loads without OpenCL", test_loads_without_opencl)])
