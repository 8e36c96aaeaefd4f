# SPDX-License-Identifier: MIT
"""OpenMP target offload measurement, end to end: the samples in
samples/omp-target run as users run them, `gputool run -- ./sample` with no
LD_LIBRARY_PATH (offloaded to the host, which fires every OMPT target
callback); the profile must show the bytes, counts and contexts the samples
are known to produce. Bare OMP_TOOL_LIBRARIES, where libomptarget cannot
find libomp.so, must say so once, with the fix.
Usage: test_omp_target.py BUILD_DIR"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import gtrun  # noqa: E402
from gtrun import inclusive, no_runtime_frames, Fail, check, main, profiles, run, run_gputool, run_under_tool  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
LIB = os.path.join(BUILD, "libgputool.so")
GPUTOOL = os.path.join(BUILD, "gputool")
SAMPLES = os.path.join(BUILD, "samples", "omp-target")
# The samples find LLVM's libomp and libomptarget through their RUNPATH.
ENV = {"OMP_NUM_THREADS": "2"}
HINT = "OpenMP target regions are not measured"
if os.environ.get("GT_TARGET_PRELOAD"):
    # Sanitizer builds: the samples are not instrumented, the tool is.
    ENV["LD_PRELOAD"] = os.environ["GT_TARGET_PRELOAD"]

CONSTRUCTS = ("<omp target>", "<omp target enter data>", "<omp target exit data>",
              "<omp target update>")
OPS = {  # placeholder: (count, bytes) metrics
    "<omp alloc>": ("OMP_TGT_ALLOC_COUNT", "OMP_TGT_ALLOC_BYTES"),
    "<omp copy h2d>": ("OMP_TGT_H2D_COUNT", "OMP_TGT_H2D_BYTES"),
    "<omp copy d2h>": ("OMP_TGT_D2H_COUNT", "OMP_TGT_D2H_BYTES"),
    "<omp copy d2d>": ("OMP_TGT_D2D_COUNT", "OMP_TGT_D2D_BYTES"),
    "<omp delete>": ("OMP_TGT_DELETE_COUNT", None),
    "<omp kernel>": ("OMP_TGT_KERNEL_COUNT", "OMP_TGT_KERNEL_TEAMS"),
}
OP_TIMES = ("OMP_TGT_ALLOC_TIME", "OMP_TGT_H2D_TIME", "OMP_TGT_D2H_TIME", "OMP_TGT_D2D_TIME",
            "OMP_TGT_DELETE_TIME", "OMP_TGT_KERNEL_TIME")
D = 8  # bytes per double


def sample(name):
    exe = os.path.join(SAMPLES, name)
    if not os.path.exists(exe):
        raise Fail("%s was not built" % exe)
    return exe


def one_profile(outdir):
    return gtrun.one_profile(GPUTOOL, outdir)



def shape(p):
    """Every operation sits under a device node; a device node sits under a
    construct or a frame (operations outside constructs); every construct
    holds only device nodes."""
    for n in p.doc["nodes"]:
        name = n.get("name") or ""
        parent = p.nodes.get(n.get("parent"))
        if name in OPS:
            check(parent and parent.get("kind") == "name" and parent["name"].startswith("device "),
                  "%s at %s is not under a device" % (name, "/".join(p.names(n))))
        if n.get("kind") == "name" and name.startswith("device "):
            check(parent and (parent.get("name") in CONSTRUCTS or parent.get("kind") == "frame"),
                  "device node at %s" % "/".join(p.names(n)))
        if name in CONSTRUCTS:
            kids = p.children.get(n["id"], [])
            check(kids and all(k.get("kind") == "name" for k in kids),
                  "%s children: %s" % (name, [k.get("name") for k in kids]))


def constructs(p, kind, caller):
    return [n for n in p.find(kind) if caller in p.names(n)]


def totals(p, nodes):
    """Inclusive sums over the given nodes, by metric."""
    out = {}
    for n in nodes:
        for k, v in inclusive(n).items():
            out[k] = out.get(k, 0) + v
    return out


def expect(got, want, where):
    for m, v in want.items():
        check(got.get(m, 0) == v, "%s: %s = %s, expected %s" % (where, m, got.get(m, 0), v))


def region_times_consistent(p):
    """A construct's time covers the operations it contains (one clock,
    nested callbacks on one thread)."""
    for n in p.doc["nodes"]:
        if n.get("kind") != "name" or not (n.get("name") or "").startswith("device "):
            continue
        parent = p.nodes.get(n.get("parent"))
        if not parent or parent.get("name") not in CONSTRUCTS:
            continue
        ops = sum(inclusive(n).get(m, 0) for m in OP_TIMES)
        t = p.excl(n, "OMP_TGT_TIME")
        check(t > 0, "no OMP_TGT_TIME at %s" % "/".join(p.names(n)))
        check(t >= ops, "%s: construct time %d < its operations' %d" % ("/".join(p.names(n)), t, ops))


def site_bytes(calls, n):
    return {"OMP_TGT_COUNT": calls,
            "OMP_TGT_ALLOC_COUNT": 3 * calls, "OMP_TGT_ALLOC_BYTES": 3 * calls * n * D,
            "OMP_TGT_H2D_COUNT": 2 * calls, "OMP_TGT_H2D_BYTES": 2 * calls * n * D,
            "OMP_TGT_D2H_COUNT": 2 * calls, "OMP_TGT_D2H_BYTES": 2 * calls * n * D,
            "OMP_TGT_DELETE_COUNT": 3 * calls, "OMP_TGT_KERNEL_COUNT": calls}


def run_tool(exe, env=ENV, args=()):
    return run_gputool(GPUTOOL, exe, args=args, env=env)


def test_transfer():
    outdir, err = run_tool(sample("transfer"))
    lines = [l for l in err.splitlines() if l.strip()]
    check(len(lines) == 1 and lines[0].startswith("gputool: report "),
          "expected one line on stderr, got %r" % err)
    p = one_profile(outdir)
    no_runtime_frames(p)
    shape(p)
    region_times_consistent(p)
    # One construct, two callers, each with its own bytes.
    n_small, c_small, n_large, c_large, N, upd_to, upd_from = 256, 3, 1024, 5, 4096, 100, 200
    for caller, calls, n in (("path_small", c_small, n_small), ("path_large", c_large, n_large)):
        rs = constructs(p, "<omp target>", caller)
        check(len(rs) == 1, "expected one <omp target> under %s, found %d" % (caller, len(rs)))
        names = p.names(rs[0])
        check(names[0] == "main" and names[-2] == "site" and names[-3] == caller,
              "%s construct context is %s" % (caller, "/".join(names)))
        devs = p.children.get(rs[0]["id"], [])
        check(len(devs) == 1 and devs[0]["name"] == "device 0 (generic-64bit)",
              "device nodes %s" % [d.get("name") for d in devs])
        expect(totals(p, rs), site_bytes(calls, n), caller)
        # a is uploaded unchanged at every call: resent from the 2nd call;
        # c changes at every call.
        again = calls - 1
        expect(totals(p, rs), {"GXCOPY_RESENT_COUNT": again, "GXCOPY_RESENT_BYTES": again * n * D},
               caller + " resent")
        # The kernel hangs under its construct's device node.
        kernels = [k for k in p.children.get(devs[0]["id"], []) if k["name"] == "<omp kernel>"]
        check(len(kernels) == 1 and p.excl(kernels[0], "OMP_TGT_KERNEL_COUNT") == calls,
              "%s kernels %s" % (caller, kernels))
    # Data kept on the device.
    expect(totals(p, constructs(p, "<omp target enter data>", "resident")),
           {"OMP_TGT_COUNT": 1, "OMP_TGT_ALLOC_COUNT": 2, "OMP_TGT_ALLOC_BYTES": 2 * N * D,
            "OMP_TGT_H2D_COUNT": 1, "OMP_TGT_H2D_BYTES": N * D}, "enter data")
    updates = constructs(p, "<omp target update>", "resident")
    check(len(updates) == 2, "expected two update sites, found %d" % len(updates))
    expect(totals(p, updates), {"OMP_TGT_COUNT": 2, "OMP_TGT_H2D_BYTES": upd_to * D,
                                "OMP_TGT_D2H_BYTES": upd_from * D, "OMP_TGT_H2D_COUNT": 1,
                                "OMP_TGT_D2H_COUNT": 1}, "update")
    expect(totals(p, constructs(p, "<omp target exit data>", "resident")),
           {"OMP_TGT_COUNT": 1, "OMP_TGT_D2H_COUNT": 1, "OMP_TGT_D2H_BYTES": N * D,
            "OMP_TGT_DELETE_COUNT": 2, "OMP_TGT_ALLOC_COUNT": 0, "OMP_TGT_H2D_COUNT": 0},
           "exit data")
    check(not totals(p, constructs(p, "<omp target enter data>", "resident")).get("GXCOPY_RESENT_COUNT")
          and not totals(p, updates).get("GXCOPY_RESENT_COUNT"), "resident(): new bytes called resent")
    # The kernel on present data moves nothing.
    expect(totals(p, constructs(p, "<omp target>", "resident")),
           {"OMP_TGT_COUNT": 1, "OMP_TGT_KERNEL_COUNT": 1, "OMP_TGT_ALLOC_COUNT": 0,
            "OMP_TGT_H2D_COUNT": 0, "OMP_TGT_D2H_COUNT": 0}, "resident kernel")
    # Whole program, per direction.
    small, large = site_bytes(c_small, n_small), site_bytes(c_large, n_large)
    expect(inclusive(p.nodes[0]),
           {"OMP_TGT_H2D_BYTES": small["OMP_TGT_H2D_BYTES"] + large["OMP_TGT_H2D_BYTES"] +
            N * D + upd_to * D,
            "OMP_TGT_D2H_BYTES": small["OMP_TGT_D2H_BYTES"] + large["OMP_TGT_D2H_BYTES"] +
            N * D + upd_from * D,
            "OMP_TGT_COUNT": c_small + c_large + 5,
            "OMP_TGT_KERNEL_COUNT": c_small + c_large + 1}, "program")
    # What the report says about the devices and the timing source.
    check("generic-64bit" in (p.meta("omp_devices") or ""), "omp_devices %r" % p.meta("omp_devices"))
    check("device 0:" in (p.meta("omp_images") or ""), "omp_images %r" % p.meta("omp_images"))
    check((p.meta("omp_target_timing") or "").startswith("host begin/end callbacks"),
          "omp_target_timing %r" % p.meta("omp_target_timing"))
    report = open([os.path.join(outdir, f) for f in os.listdir(outdir) if f.endswith(".txt")][0]).read()
    check("generic-64bit" in report and "host begin/end callbacks" in report,
          "text report header lacks the devices or the timing source")


def test_nowait():
    outdir, _ = run_tool(sample("nowait"))
    p = one_profile(outdir)
    no_runtime_frames(p)
    shape(p)
    region_times_consistent(p)
    chunks, chunk, rounds = 4, 512, 3
    every = p.find("<omp target>")
    rs = constructs(p, "<omp target>", "async_site")
    check(rs and len(rs) == len(every), "targets outside async_site: %s" %
          ["/".join(p.names(r)) for r in every if r not in rs])
    for r in rs:
        check(p.names(r)[-2] == "async_site", "deferred target at %s" % "/".join(p.names(r)))
    k = chunks * rounds
    expect(totals(p, rs), {"OMP_TGT_COUNT": k, "OMP_TGT_KERNEL_COUNT": k,
                           "OMP_TGT_ALLOC_COUNT": k, "OMP_TGT_ALLOC_BYTES": k * chunk * D,
                           "OMP_TGT_H2D_COUNT": k, "OMP_TGT_H2D_BYTES": k * chunk * D,
                           "OMP_TGT_D2H_COUNT": k, "OMP_TGT_D2H_BYTES": k * chunk * D,
                           "OMP_TGT_DELETE_COUNT": k}, "nowait")
    # Target tasks are not counted as explicit tasks.
    check(not p.find("<omp task>"), "target tasks reported as <omp task>")
    check(constructs(p, "<omp taskwait>", "async_site"), "no taskwait under async_site")


def test_threads():
    outdir, _ = run_tool(sample("threads"))
    p = one_profile(outdir)
    no_runtime_frames(p)
    shape(p)
    region_times_consistent(p)
    threads, reps, slice_ = 4, 10, 256
    rs = p.find("<omp target>")
    for r in rs:
        names = p.names(r)
        check("offload_team" in names and "<omp parallel>" in names,
              "target at %s" % "/".join(names))
    k = threads * reps
    expect(totals(p, rs), {"OMP_TGT_COUNT": k, "OMP_TGT_KERNEL_COUNT": k,
                           "OMP_TGT_ALLOC_BYTES": k * slice_ * D,
                           "OMP_TGT_H2D_BYTES": k * slice_ * D, "OMP_TGT_D2H_BYTES": k * slice_ * D,
                           "OMP_TGT_DELETE_COUNT": k}, "threads")
    # Each thread of the team offloaded its own regions, under the same context.
    stats = [p.per_thread(dev, "OMP_TGT_COUNT") for r in rs for dev in p.children.get(r["id"], [])]
    stats = [s for s in stats if s[0]]
    check(stats == [(threads, reps, reps, threads * reps)],
          "regions per thread (threads, min, max, sum) %s, expected %d threads x %d" % (stats, threads, reps))


def test_sampling_off_same_numbers():
    outdir, _ = run_tool(sample("transfer"), env=dict(ENV, GPUTOOL_SAMPLE_HZ="0"))
    p = one_profile(outdir)
    expect(inclusive(p.nodes[0]), {"OMP_TGT_COUNT": 13, "OMP_TGT_KERNEL_COUNT": 9}, "no sampling")


def loaded_libomp(exe):
    """The libomp exe loads, as the dynamic loader resolves it."""
    out = subprocess.run(["ldd", exe], capture_output=True, text=True,
                         env={k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}).stdout
    m = re.search(r"^\s*libomp\.so\S* => (\S+)", out, re.M)
    check(m, "ldd %s names no libomp:\n%s" % (exe, out))
    return os.path.realpath(m.group(1))


def libomp_so_on_default_path():
    """Whether the name libomp.so resolves without any LD_LIBRARY_PATH or
    RUNPATH (a system-wide libomp.so, e.g. from a libomp-dev package)."""
    cache = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    return bool(re.search(r"^\s*libomp\.so \(", cache, re.M)) or any(
        os.path.exists(os.path.join(d, "libomp.so")) for d in ("/lib", "/usr/lib", "/lib64", "/usr/lib64"))


def test_gputool_run_libomp():
    """gputool run, no LD_LIBRARY_PATH: libomptarget is given a libomp.so
    that is the very file the program loads; with a user's LD_LIBRARY_PATH
    too, the counts stay exact."""
    exe = sample("transfer")
    outdir, err = run_tool(exe)
    links = [d for d in os.listdir(outdir) if d.startswith(".libomp-")]
    check(len(links) == 1, "expected one .libomp-* directory in %s: %s" % (outdir, os.listdir(outdir)))
    d = os.path.join(outdir, links[0])
    check(os.listdir(d) == ["libomp.so"], "%s holds %s" % (d, os.listdir(d)))
    check(os.path.realpath(os.path.join(d, "libomp.so")) == loaded_libomp(exe),
          "%s/libomp.so -> %s, the program loads %s" % (d, os.path.realpath(os.path.join(d, "libomp.so")),
                                                       loaded_libomp(exe)))
    h2d = (2 * 3 * 256 + 2 * 5 * 1024 + 4096 + 100) * D  # as test_transfer counts it
    expect(inclusive(one_profile(outdir).nodes[0]),
           {"OMP_TGT_COUNT": 13, "OMP_TGT_KERNEL_COUNT": 9, "OMP_TGT_H2D_BYTES": h2d}, "gputool run")
    check(HINT not in err, "hint under gputool run: %r" % err)
    user = tempfile.mkdtemp(prefix="gputool-ldpath-")
    outdir, err = run_gputool(GPUTOOL, exe, env=dict(ENV, LD_LIBRARY_PATH=user), unset=())
    expect(inclusive(one_profile(outdir).nodes[0]), {"OMP_TGT_COUNT": 13, "OMP_TGT_KERNEL_COUNT": 9},
           "gputool run with LD_LIBRARY_PATH set")
    # A program without libomptarget is left as it is.
    outdir, err = run_gputool(GPUTOOL, os.path.join(BUILD, "samples", "omp-host", "split"), ["100000"], env=ENV)
    check(not [f for f in os.listdir(outdir) if f.startswith(".libomp-")], "libomp link for a host program")


def test_bare_tool_hint():
    """OMP_TOOL_LIBRARIES alone, no LD_LIBRARY_PATH: where libomp.so does
    not resolve, libomptarget never reports, and the tool says so once, on
    stderr and in the report, naming the fix; where it does, every count is
    there and nothing is said."""
    exe = sample("transfer")
    outdir, err = run_under_tool(LIB, exe, env=dict(ENV, LD_PRELOAD=ENV.get("LD_PRELOAD", "")))
    p = one_profile(outdir)
    report = open([os.path.join(outdir, f) for f in os.listdir(outdir) if f.endswith(".txt")][0]).read()
    if libomp_so_on_default_path():
        check(HINT not in err and p.meta("omp_target_hint") is None, "hint though libomp.so resolves: %r" % err)
        expect(inclusive(p.nodes[0]), {"OMP_TGT_COUNT": 13}, "bare OMP_TOOL_LIBRARIES")
        return
    hints = [l for l in err.splitlines() if HINT in l]
    lib = loaded_libomp(exe)
    check(len(hints) == 1, "expected the hint once on stderr, got %r" % err)
    check("gputool run -- " in hints[0] and "LD_LIBRARY_PATH=%s" % os.path.dirname(lib) in hints[0]
          and lib in hints[0], "hint lacks the fix: %r" % hints[0])
    hint = p.meta("omp_target_hint") or ""
    check(hint.startswith("not measured:") and "gputool run -- " in hint, "omp_target_hint %r" % hint)
    check(re.search(r"^  OMP target +not measured: ", report, re.M), "report header lacks the hint")
    check(not p.find("<omp target>") and "OMP_TGT_COUNT" not in inclusive(p.nodes[0]),
          "target work measured though libomptarget never reported")
    # The fix the hint names works: every count, no hint.
    outdir, err = run_under_tool(LIB, exe, env=dict(ENV, LD_LIBRARY_PATH=os.path.dirname(lib)))
    p = one_profile(outdir)
    check(HINT not in err and p.meta("omp_target_hint") is None, "hint with LD_LIBRARY_PATH set: %r" % err)
    expect(inclusive(p.nodes[0]), {"OMP_TGT_COUNT": 13, "OMP_TGT_KERNEL_COUNT": 9}, "with LD_LIBRARY_PATH")


def test_resend():
    """The same input mapped at every step of a time loop: its uploads after
    the first are resent (8 MiB, compared by its sample), the changing
    array's are not; the report advises keeping it on the device,
    at the construct. The fixed program sends it once: no advice."""
    steps, n, m = 20, 1 << 20, 1024
    src = open(os.path.join(os.path.dirname(__file__), "..", "..", "samples", "omp-target", "resend.c")).read()
    lines = src.splitlines()
    line = [i + 1 for i, l in enumerate(lines) if "map(to : x[0:N]) map(tofrom" in l][0]
    # clang's -O2 line tables put the offload call at the line of the
    # construct or of its function's opening.
    where = ["step (resend.c:%d)" % k for k in (line, line - 1)]
    outdir, err = run_tool(sample("resend"))
    p = one_profile(outdir)
    total = inclusive(p.nodes[0])
    expect(total, {"GXCOPY_RESENT_COUNT": steps - 1, "GXCOPY_RESENT_BYTES": (steps - 1) * n * D,
                   "OMP_TGT_H2D_COUNT": 2 * steps, "OMP_TGT_H2D_BYTES": steps * (n + m) * D}, "resend")
    for node in p.doc["nodes"]:
        if p.excl(node, "GXCOPY_RESENT_COUNT"):
            check(node.get("name") == "<omp copy h2d>", "resent at %s" % "/".join(p.names(node)))
    code, out, _ = run([GPUTOOL, "report", outdir, "--format", "json"])
    check(code == 0, "gputool report failed")
    advice = [a for a in json.loads(out).get("advice", []) if a["kind"] == "resent-data"]
    check(advice, "no resent-data advice: %s" % [a["kind"] for a in json.loads(out).get("advice", [])])
    check(all(any(w in a["at"] for w in where) and "< loop" in a["at"] for a in advice),
          "advice not at the construct (line %d): %s" % (line, [a["at"] for a in advice]))
    check(any(a.get("saved_ns", 0) > 0 for a in advice), "no estimated gain: %s" % advice)
    outdir, err = run_tool(sample("resend"), args=("fixed",))
    total = inclusive(one_profile(outdir).nodes[0])
    expect(total, {"GXCOPY_RESENT_COUNT": 0, "OMP_TGT_H2D_BYTES": (n + steps * m) * D}, "resend fixed")


def test_host_kernel():
    """A target region offloaded to the host device (tests/e2e/host_offload.c),
    called 3 times from from_one and twice from from_two: the host plugin
    runs the offloaded function on libomp's threads, in parallel regions
    opened inside the submission. Their CPU samples hang under the
    construct's <omp kernel>, each call path counts its targets once, and
    the kernel is named by its offload entry: function and line."""
    exe = os.path.join(BUILD, "tests", "e2e", "host_offload")
    if not os.path.exists(exe):
        raise Fail("%s was not built" % exe)
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "host_offload.c")
    line = gtrun.marked_line(src, "KERNEL").split(":")[1]
    outdir, err = run_tool(exe, args=("4000",))
    p = one_profile(outdir)
    no_runtime_frames(p)
    for caller, calls in (("from_one", 3), ("from_two", 2)):
        rs = constructs(p, "<omp target>", caller)
        check(len(rs) == 1, "expected one <omp target> under %s, found %d" % (caller, len(rs)))
        check(p.names(rs[0])[-2:] == ["work", "<omp target>"], "context %s" % "/".join(p.names(rs[0])))
        expect(totals(p, rs), {"OMP_TGT_COUNT": calls, "OMP_TGT_KERNEL_COUNT": calls}, caller)
        kernels = [k for k in p.descendants(rs[0]) if k.get("name") == "<omp kernel>"]
        check(len(kernels) == 1, "%s: %d <omp kernel> nodes" % (caller, len(kernels)))
        names = [n.get("name") for n in p.descendants(kernels[0])
                 if n.get("kind") == "name" and p.nodes[n["parent"]].get("name") == "<gpu kernel>"]
        check(names == ["work:%s" % line], "%s: kernel names %s, expected work:%s" % (caller, names, line))
        check(p.incl(kernels[0], "CPUTIME") > 0, "%s: no CPU samples under <omp kernel>" % caller)
    # Every sample of the offloaded code, and every parallel region the
    # plugin opened for it, is under a kernel.
    for n in p.doc["nodes"]:
        offloaded = (n.get("name") or "").startswith("__omp_offloading") or n.get("name") == "<omp parallel>"
        if offloaded and p.incl(n, "CPUTIME"):
            check("<omp kernel>" in p.names(n), "CPU time outside the kernel at %s" % "/".join(p.names(n)))


def importance_monotone(doc):
    """I_C never grows going down the tree: a context's CPU time not covered
    by device time is part of its parent's."""
    ic = {n["id"]: n.get("importance", {}).get("I_C", 0) for n in doc["nodes"]}
    for n in doc["nodes"]:
        up = n.get("parent")
        if up is not None and up in ic:
            check(ic[n["id"]] <= ic[up] + 1e-9, "I_C %.4f at %s above its parent's %.4f" %
                  (ic[n["id"]], n.get("label") or n.get("name"), ic[up]))


def test_host_report():
    """The report of a run offloaded to the host device only: its kernels
    are CPU time (no GPU time, no GPU-bound wording; I_C of a context never
    above its parent's), each target is one row of the regions table (not
    the host plugin's three nested regions), and the header lists the one
    device used, of the four the runtime offered."""
    exe = os.path.join(BUILD, "tests", "e2e", "host_offload")
    if not os.path.exists(exe):
        raise Fail("%s was not built" % exe)
    outdir, err = run_tool(exe, args=("4000",))
    code, out, _ = run([GPUTOOL, "report", outdir, "--format", "json"])
    check(code == 0, "gputool report --format json failed")
    doc = json.loads(out)
    imp = doc["importance"]
    check(imp["G_P"] == 0 and imp["bound"] == "cpu-only",
          "host kernels counted as GPU time: G_P %s, bound %s" % (imp["G_P"], imp["bound"]))
    importance_monotone(doc)
    code, text, _ = run([GPUTOOL, "report", outdir])
    check(code == 0, "gputool report failed")
    for bad in ("GPU-bound", "CPU-bound", "offloading them may pay", "No GPU operations were measured"):
        check(bad not in text, "%r in the report of a host-offload run" % bad)
    check("Offloaded to the host (generic-64bit): kernels run on this CPU" in text,
          "no host-offload line:\n%s" % text[:2000])
    # Its operations are listed as the host's, in no GPU section, and no
    # device is said to sit idle; every line within the width.
    for bad in ("\nGPU operations (", "\nBlame shifting", "GPU_IDLE_CAUSE", "<gpu copy", "<gpu kernel>"):
        check(bad not in text, "%r in the report of a host-offload run" % bad.strip())
    ops = text.split("\nOffloaded operations (", 1)[1].split("\n\n", 1)[0] if "\nOffloaded operations (" in text else ""
    check(re.search(r"kernel work:\d+ +<omp kernel>", ops) and "<copy h2d>" in ops,
          "no offloaded operations' section with the kernel and its copies:\n%s" % ops)
    wide = [l for l in text.splitlines() if len(l) > 160]
    check(not wide, "lines wider than 160: %s" % wide)
    # One row per target call path, labelled with its kernel; none for the
    # plugin's nested regions.
    section = text.split("OpenMP parallel regions", 1)[1].split("\n\n", 1)[0]
    rows = [l for l in section.splitlines() if re.match(r"\s+\d+\s+\d+\s", l)]
    check(len(rows) == 2, "regions table has %d rows, expected 2 (one per target):\n%s" % (len(rows), section))
    check(section.count("kernel work:") == 2, "kernel rows not named:\n%s" % section)
    check("> <omp parallel>" not in section, "a region inside the kernel listed:\n%s" % section)
    # The CPU's parallel share of a kernel row: both threads ran it.
    for l in rows:
        check(l.split()[4] == "2.0", "kernel row threads %s, expected 2.0: %s" % (l.split()[4], l))
    devices = re.search(r"OMP devices\s+(.*)", text)
    check(devices and devices.group(1).startswith("0 generic-64bit"),
          "OMP devices: %r" % (devices.group(1) if devices else None))
    check(devices and re.fullmatch(r"0 generic-64bit, of \d+ offered", devices.group(1).strip()),
          "unused devices listed: %r" % devices.group(1))


main([
    ("transfer: bytes per direction and context, counts, devices", test_transfer),
    ("host offload: the kernel's samples under it, named by its entry", test_host_kernel),
    ("host offload report: CPU time, one row per target, the devices used", test_host_report),
    ("the same input uploaded at every step: resent, and advice", test_resend),
    ("nowait targets under their call site", test_nowait),
    ("targets from every thread of a parallel region", test_threads),
    ("sampling off: same counts", test_sampling_off_same_numbers),
    ("gputool run: libomp.so for libomptarget, exact bytes, no LD_LIBRARY_PATH", test_gputool_run_libomp),
    ("bare OMP_TOOL_LIBRARIES: the hint once, with the fix", test_bare_tool_hint),
])
