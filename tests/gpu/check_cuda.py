# SPDX-License-Identifier: MIT
"""On a machine with an NVIDIA GPU: the profile of samples/cuda/ops SHORT,
run under libgputool.so (CUDA injection + OMPT), against what the sample
does. Usage: check_cuda.py GPUTOOL OUTDIR SHORT

With SHORT = threads:N: the profile of samples/cuda/threads N, whose N
threads each launch one kernel and copy 64 KiB back, 8 alive at a time:
every operation under worker_body, and the threads measured in about as
many records as were alive at once.

With SHORT = pcsamp: the profile of samples/cuda/pcsamp under
GPUTOOL_PC_SAMPLING: the memory-bound kernel's samples mostly memory stalls,
the compute-bound one's mostly execution stalls, the hot loop's lines
holding over 90 % of its kernel's samples, and a kernel launched from two
sites 3:1 sampled 3:1.

With SHORT = gpucalls: the profile of samples/cuda/gpucalls under
GPUTOOL_PC_SAMPLING with nvdisasm: the GPU calling contexts rebuilt from the
samples (work() under its two call sites 3:1, under pair() at depth 2,
under the recursive rec()), and work()'s loop holding most of its samples
(its calls' own instructions the rest).

With SHORT = acc: the profile of samples/openacc/sites offloaded by GCC to
the GPU under ACC_PROFLIB alone: the CUDA backend starts at the OpenACC
device initialization, and the kernels and copies the runtime makes nest
under their constructs."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from gtrun import check, main, profiles  # noqa: E402

GPUTOOL, OUTDIR, SHORT = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
KIB, MIB = 1 << 10, 1 << 20
P = None


def profile():
    global P
    if P is None:
        ps = profiles(GPUTOOL, OUTDIR)
        check(len(ps) == 1, "expected one profile in %s, found %d" % (OUTDIR, len(ps)))
        P = ps[0]
    return P


def total(ph, site, metric, kernel=None):
    """Sums @metric over placeholders @ph whose context passes through a
    frame naming @site (None: anywhere), on the kernel-name children that
    contain @kernel when given."""
    p, v = profile(), 0
    for n in p.find(ph):
        if site and not any(site in x for x in p.names(n)[:-1]):
            continue
        if kernel is None:
            v += p.excl(n, metric)
        else:
            v += sum(p.excl(k, metric) for k in p.children.get(n["id"], [])
                     if kernel in (k.get("name") or ""))
    return v


def expect(rows):
    bad = []
    for label, got, want in rows:
        ok = got == want if not callable(want) else want(got)
        print("  %-52s %12s  %s" % (label, got, "ok" if ok else "MISMATCH (expected %s)" % (
            want if not callable(want) else want.__doc__)))
        if not ok:
            bad.append(label)
    check(not bad, "mismatches: %s" % ", ".join(bad))


def positive(x):
    """> 0"""
    return x > 0


def test_facts():
    p = profile()
    for k in ("cuda_devices", "cuda_driver", "cupti_version", "cupti_records"):
        print("  %-14s %s" % (k, p.meta(k)))
        check(p.meta(k), "no %s in the report header" % k)


def test_copies_memsets_allocs():
    expect([
        ("upload: <gpu copy h2d> bytes", total("<gpu copy h2d>", "upload", "GXCOPY_H2D_BYTES"), 4 * MIB),
        ("upload: <gpu copy h2d> count", total("<gpu copy h2d>", "upload", "GXCOPY_H2D_COUNT"), 4),
        ("upload: <gpu copy h2d> time (ns)", total("<gpu copy h2d>", "upload", "GXCOPY_H2D"), positive),
        ("download: <gpu copy d2h> bytes", total("<gpu copy d2h>", "download", "GXCOPY_D2H_BYTES"), 3 * 512 * KIB),
        ("shuffle: <gpu copy d2d> bytes", total("<gpu copy d2d>", "shuffle", "GXCOPY_D2D_BYTES"), 2 * 256 * KIB),
        ("streams: <gpu copy d2h> bytes", total("<gpu copy d2h>", "streams", "GXCOPY_D2H_BYTES"), 4 * 128 * KIB),
        ("upload: bytes from pageable memory", total("<gpu copy h2d>", "upload", "GXCOPY_PAGEABLE_BYTES"), 4 * MIB),
        ("download: bytes to pageable memory", total("<gpu copy d2h>", "download", "GXCOPY_PAGEABLE_BYTES"), 3 * 512 * KIB),
        ("streams: bytes to pageable memory (pinned)", total("<gpu copy d2h>", "streams", "GXCOPY_PAGEABLE_BYTES"), 0),
        ("clear: <gpu memset> bytes", total("<gpu memset>", "clear", "GMSET_BYTES"), 5 * 64 * KIB),
        ("clear: <gpu memset> count", total("<gpu memset>", "clear", "GMSET_COUNT"), 5),
        ("driver_calls (cuMemsetD32): <gpu memset> bytes", total("<gpu memset>", "driver_calls", "GMSET_BYTES"), 3 * 32 * KIB),
        ("main: <gpu alloc> count", total("<gpu alloc>", "main", "GMEM_COUNT"), 4),
        ("main: <gpu alloc> bytes", total("<gpu alloc>", "main", "GMEM_BYTES"), 4 * MIB),
        ("main: <gpu free> count", total("<gpu free>", "main", "GMEM_COUNT"), 4),
    ])


def test_kernels():
    expect([
        ("many_short: empty_kernel launches", total("<gpu kernel>", "many_short", "GKER_COUNT", "empty_kernel"), SHORT),
        ("streams: scale launches", total("<gpu kernel>", "streams", "GKER_COUNT", "scale"), 200),
        ("streams: scale blocks (sum)", total("<gpu kernel>", "streams", "GKER_BLKS", "scale"), 200 * 64),
        ("streams: scale threads/block (sum)", total("<gpu kernel>", "streams", "GKER_BLK_THR", "scale"), 200 * 256),
        ("streams: scale registers/thread (sum)", total("<gpu kernel>", "streams", "GKER_THR_REG", "scale"), positive),
        ("streams: scale occupancy (permille, sum)", total("<gpu kernel>", "streams", "GKER_OCC_THR", "scale"),
         lambda x: 0 < x <= 200 * 1000),
        ("workers (4 OpenMP threads): axpy launches", total("<gpu kernel>", "workers", "GKER_COUNT", "axpy"), 400),
        ("stencil_run: stencil launches", total("<gpu kernel>", "stencil_run", "GKER_COUNT", "stencil"), 20),
        ("stencil_run: stencil dynamic shared memory (sum)", total("<gpu kernel>", "stencil_run", "GKER_DYMEM", "stencil"), 20 * 1024),
        ("graph: scale launches", total("<gpu kernel>", "graph", "GKER_COUNT", "scale"), 10),
        ("graph: axpy launches", total("<gpu kernel>", "graph", "GKER_COUNT", "axpy"), 10),
        ("graph: stencil launches", total("<gpu kernel>", "graph", "GKER_COUNT", "stencil"), 10),
        ("all: kernel time (ns)", total("<gpu kernel>", None, "GKER", ""), positive),
    ])


def test_syncs():
    expect([
        ("many_short: <gpu sync> count", total("<gpu sync>", "many_short", "GSYNC_COUNT"), 1),
        ("streams: <gpu sync> count", total("<gpu sync>", "streams", "GSYNC_COUNT"), 4),
        ("workers: <gpu sync> count", total("<gpu sync>", "workers", "GSYNC_COUNT"), 4),
        ("event_wait: <gpu sync> count", total("<gpu sync>", "event_wait", "GSYNC_COUNT"), 1),
        ("many_short: <gpu sync> time (ns)", total("<gpu sync>", "many_short", "GSYNC"), positive),
    ])


GPU_PLACEHOLDERS = ("<gpu kernel>", "<gpu copy h2d>", "<gpu copy d2h>", "<gpu copy d2d>", "<gpu copy>",
                    "<gpu memset>", "<gpu alloc>", "<gpu free>", "<gpu sync>")
RUNTIME_NAMES = ("libcudart_static", "__device_stub", "cudaLaunchKernel", "__cudaLaunch", "cudaMemcpy",
                 "cudaDeviceSynchronize", "cudaMalloc")


def test_contexts():
    """Each operation hangs under the user's call site: no CUDA runtime
    (static in the binary), launch stub, driver or CUPTI frame in the
    context of any GPU operation."""
    p = profile()
    bad = set()
    for ph in GPU_PLACEHOLDERS:
        for n in p.find(ph):
            bad.update(x for x in p.names(n) if any(s in x for s in RUNTIME_NAMES) or x == "?")
    check(not bad, "runtime or unknown frames in GPU contexts: %s" % sorted(bad)[:8])
    sampled = {n.get("name") for n in p.doc["nodes"] if n.get("kind") == "frame" and
               any(s in (n.get("name") or "") for s in RUNTIME_NAMES)}
    print("  (CPU samples inside the static CUDA runtime keep %d of its frames)" % len(sampled))
    for ph, site in (("<gpu kernel>", "many_short"), ("<gpu copy h2d>", "upload"), ("<gpu sync>", "event_wait")):
        ns = [n for n in p.find(ph) if any(site in x for x in p.names(n))]
        check(ns, "no %s under %s" % (ph, site))
        for n in ns:
            names = p.names(n)
            print("  %-16s %s" % (ph, " > ".join(names[-4:])))
            check(site in names[-2], "%s hangs under %s, not at the call site in %s" % (ph, names[-2], site))
    for n in p.find("<gpu kernel>"):
        if any("workers" in x for x in p.names(n)):
            print("  %-16s %s" % ("worker kernel", " > ".join(p.names(n)[-5:])))
            break


def test_acc():
    p = profile()
    under_acc = lambda n: any(x.startswith("<acc ") for x in p.names(n))
    kernels = [n for n in p.find("<gpu kernel>")]
    launches = sum(p.incl(n, "GKER_COUNT") for n in kernels if under_acc(n))
    stray = sum(p.incl(n, "GKER_COUNT") for n in kernels if not under_acc(n))
    h2d = sum(p.excl(n, "GXCOPY_H2D_BYTES") for n in p.find("<gpu copy h2d>") if under_acc(n))
    d2h = sum(p.excl(n, "GXCOPY_D2H_BYTES") for n in p.find("<gpu copy d2h>") if under_acc(n))
    for n in kernels[:3]:
        print("  %s" % " > ".join(p.names(n)[-5:]))
    expect([("kernels under OpenACC constructs", launches, 40),
            ("kernels outside them", stray, 0),
            ("bytes up under constructs (at least the mapped arrays)", h2d, lambda x: x >= (2 * 30 + 10) * 400000),
            ("bytes down under constructs", d2h, lambda x: x >= 40 * 400000)])
    print("  cuda_devices %s" % p.meta("cuda_devices"))


def test_threads(n):
    p = profile()
    records = p.threads()
    reused = int(p.meta("threads_reused") or 0)
    print("  %d threads in %d records (%d took over an ended thread's record)" % (records + reused, records, reused))
    expect([("worker_body: fill launches", total("<gpu kernel>", "worker_body", "GKER_COUNT", "fill"), n),
            ("worker_body: <gpu copy d2h> bytes", total("<gpu copy d2h>", "worker_body", "GXCOPY_D2H_BYTES"), n * 64 * KIB),
            ("worker_body: <gpu copy d2h> count", total("<gpu copy d2h>", "worker_body", "GXCOPY_D2H_COUNT"), n),
            ("records (8 workers alive at once, main, CUDA's)", records, lambda x: x <= 8 + 4),
            ("threads measured in a handed-on record", reused, lambda x: x >= n - 8)])


PC_CLASSES = ("GPC_MEMORY", "GPC_EXEC", "GPC_CONTROL", "GPC_SYNC", "GPC_ISSUED", "GPC_NOT_SELECTED", "GPC_OTHER")


def marked(src, tag):
    got = [i + 1 for i, line in enumerate(open(src)) if line.rstrip().endswith("// " + tag)]
    check(got, "no line marked %s in %s" % (tag, src))
    return got


def test_gpucalls():
    p = profile()
    src = os.path.join(os.path.dirname(__file__), "..", "..", "samples", "cuda", "gpucalls.cu")
    line = {t: "gpucalls.cu:%d" % marked(src, t)[0] for t in
            ("SITE_A", "SITE_B", "NESTED", "PAIR_1", "PAIR_2", "ROOT", "REC_WORK", "RECURSE")}
    work_loop = "loop at gpucalls.cu:%d" % marked(src, "WORK")[0]
    print("  pc_sampling: %s" % p.meta("pc_sampling"))
    kernels = {}
    for k in p.find("<gpu kernel>"):
        for kern in p.children.get(k["id"], []):
            kernels.setdefault((kern.get("name") or "").split("(")[0], []).append(kern)

    def under(kernel, *names):
        """Inclusive GPC_SAMPLES of the nodes reached from @kernel's nodes by
        the chain @names (each a child's name, loops skipped between)."""
        total = 0
        for kern in kernels.get(kernel, []):
            level = [kern]
            for nm in names:
                nxt = []
                for n in level:
                    todo = list(p.children.get(n["id"], []))
                    while todo:
                        c = todo.pop()
                        if c.get("name") == nm:
                            nxt.append(c)
                        elif (c.get("name") or "").startswith("loop at "):
                            todo.extend(p.children.get(c["id"], []))
                level = nxt
            total += sum(p.incl(n, "GPC_SAMPLES") for n in level)
        return total

    work, pair, rec = "work(float, int, int)", "pair(float, int, int)", "rec(float, int, int)"
    a = under("two_sites", line["SITE_A"], work)
    b = under("two_sites", line["SITE_B"], work)
    n1 = under("nested", line["NESTED"], pair, line["PAIR_1"], work)
    n2 = under("nested", line["NESTED"], pair, line["PAIR_2"], work)
    r_work = under("recursive", line["ROOT"], rec, line["REC_WORK"], work)
    r_all = under("recursive", line["ROOT"], rec)
    w_all = a + b
    in_loop = under("two_sites", line["SITE_A"], work, work_loop) + under("two_sites", line["SITE_B"], work, work_loop)
    fp32 = sum(p.incl(k, "GPI_FP32") for k in kernels.get("two_sites", []))
    issued = sum(p.incl(k, "GPC_ISSUED") for k in kernels.get("two_sites", []))
    print("  two_sites: work() at SITE_A %d, at SITE_B %d; nested: pair() > work() %d, %d; recursive: rec() %d,"
          " work() in it %d; work()'s loop %d of %d; issued fp32 %d of %d" %
          (a, b, n1, n2, r_all, r_work, in_loop, w_all, fp32, issued))
    expect([("two_sites: work() at SITE_A / SITE_B within 10% of 3", round(a / b, 3) if b else 0,
             lambda x: abs(x - 3) <= 0.3),
            ("nested: work() under pair() at both call sites", n1 > 0 and n2 > 0, True),
            ("recursive: work() under rec()", r_work, positive),
            ("two_sites: work()'s loop holds > 70% of work()", round(in_loop / w_all, 3) if w_all else 0,
             lambda x: x > 0.7),
            ("two_sites: fp32 instructions among the issued", fp32, positive)])


def test_pcsamp():
    p = profile()
    src = os.path.join(os.path.dirname(__file__), "..", "..", "samples", "cuda", "pcsamp.cu")
    hot = {i + 1 for i, line in enumerate(open(src)) if "// HOT" in line}
    print("  pc_sampling: %s" % p.meta("pc_sampling"))
    check(p.meta("pc_sampling"), "no pc_sampling fact in the report header")
    per = {}   # kernel -> {class: samples}
    lines = {} # kernel -> {line: samples}
    sites = {} # kernel -> {site: samples}
    for k in p.find("<gpu kernel>"):
        # The call site in main: site_a's last launch is a tail call (its
        # frame is gone), site_b's only one too.
        site = next((n.get("line") for n in p.path(k) if n.get("name") == "main"), None)
        for kern in p.children.get(k["id"], []):
            name = kern.get("name") or ""
            for ln in p.descendants(kern):
                s = p.excl(ln, "GPC_SAMPLES")
                if not s:
                    continue
                d = per.setdefault(name, {})
                for c in PC_CLASSES:
                    d[c] = d.get(c, 0) + p.excl(ln, c)
                d["all"] = d.get("all", 0) + s
                lines.setdefault(name, {})[ln.get("name")] = lines.get(name, {}).get(ln.get("name"), 0) + s
                sites.setdefault(name, {})[site] = sites.get(name, {}).get(site, 0) + s
    for name, d in sorted(per.items()):
        print("  %-40s %8d samples: %s" % (name[:40], d["all"], ", ".join(
            "%s %.0f%%" % (c[4:].lower(), 100.0 * d[c] / d["all"]) for c in PC_CLASSES if d[c])))

    def kernel(part):
        got = [n for n in per if part in n]
        check(len(got) == 1, "kernel %s: %s" % (part, sorted(per)))
        return got[0]

    def dominant(d):
        return max((c for c in PC_CLASSES if c not in ("GPC_ISSUED", "GPC_NOT_SELECTED")), key=lambda c: d[c])

    sc, fc, hl = kernel("stream_copy"), kernel("fma_chain"), kernel("hot_loop")
    hot_share = sum(v for ln, v in lines[hl].items()
                    if ln.rsplit(":", 1)[-1].isdigit() and int(ln.rsplit(":", 1)[-1]) in hot) / per[hl]["all"]
    src_lines = open(src).read().splitlines()
    line_a = next(i + 1 for i, x in enumerate(src_lines) if x.strip().startswith("site_a(c);"))
    a = sites[fc].get(line_a, 0)
    b = sites[fc].get(line_a + 1, 0)
    print("  hot_loop: %.1f%% of its samples on the HOT lines %s; fma_chain site_a:site_b = %d:%d" %
          (100 * hot_share, sorted(hot), a, b))
    expect([("stream_copy: dominant stall class", dominant(per[sc]), "GPC_MEMORY"),
            ("fma_chain: dominant stall class", dominant(per[fc]), "GPC_EXEC"),
            ("hot_loop: share of samples on the loop's lines > 0.9", round(hot_share, 3), lambda x: x > 0.9),
            ("fma_chain: site_a / site_b within 10% of 3", round(a / b, 3) if b else 0,
             lambda x: abs(x - 3) <= 0.3)])


if SHORT == "gpucalls":
    main([("PC samples: GPU calling contexts, loops", test_gpucalls)])
if SHORT == "pcsamp":
    main([("PC samples: stall classes, hot lines, launch sites", test_pcsamp)])
if SHORT.startswith("threads:"):
    N = int(SHORT.split(":")[1])
    main([("threads that come and go: every operation, records bounded", lambda: test_threads(N))])
if SHORT == "acc":
    main([("OpenACC on the GPU: kernels and copies under their constructs", test_acc)])
SHORT = int(SHORT)
main([("report header: devices, driver, CUPTI", test_facts),
      ("copies, memsets and allocations per call site", test_copies_memsets_allocs),
      ("kernels per call site: counts, launch facts, graph kernels", test_kernels),
      ("synchronizations per call site", test_syncs),
      ("contexts end at the user's call site", test_contexts)])
