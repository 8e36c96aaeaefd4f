# SPDX-License-Identifier: MIT
"""On a machine with an NVIDIA GPU: the samples of samples/omp-target, built
with clang-19 -fopenmp --offload-arch=sm_90 -fopenmp-target-jit, run under
libgputool.so; constructs, kernels, bytes and copies per direction are
exact per calling context, as on host offload (tests/e2e/test_omp_target.py).
Usage: check_omp_target.py LIBGPUTOOL GPUTOOL SAMPLES_DIR [SAVE_DIR]
The samples run with LD_LIBRARY_PATH and LD_PRELOAD taken from
GT_RUN_LD_LIBRARY_PATH and GT_RUN_LD_PRELOAD (the LLVM runtime and its JIT
shim, docs/GPU-VALIDATION.md); SAVE_DIR gets each profile's JSON form and
the text reports. GT_CHECK_HOST_OFFLOAD=1 accepts samples offloaded to the
host, to try the script without a GPU."""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from gtrun import Profile, check, inclusive, main, run  # noqa: E402

LIB, GPUTOOL, SAMPLES = (os.path.abspath(a) for a in sys.argv[1:4])
SAVE = os.path.abspath(sys.argv[4]) if len(sys.argv) > 4 else None
ENV = {"OMP_NUM_THREADS": "4"}
for k in ("LD_LIBRARY_PATH", "LD_PRELOAD"):
    if os.environ.get("GT_RUN_" + k):
        ENV[k] = os.environ["GT_RUN_" + k]
HOST_OFFLOAD = os.environ.get("GT_CHECK_HOST_OFFLOAD") == "1"
D = 8
CONSTRUCTS = ("<omp target>", "<omp target enter data>", "<omp target exit data>",
              "<omp target update>")
OPS = ("<omp alloc>", "<omp copy h2d>", "<omp copy d2h>", "<omp copy d2d>", "<omp delete>",
       "<omp kernel>")
METRICS = ("OMP_TGT_COUNT", "OMP_TGT_KERNEL_COUNT", "OMP_TGT_ALLOC_COUNT", "OMP_TGT_ALLOC_BYTES",
           "OMP_TGT_H2D_COUNT", "OMP_TGT_H2D_BYTES", "OMP_TGT_D2H_COUNT", "OMP_TGT_D2H_BYTES",
           "OMP_TGT_DELETE_COUNT")


def profile_of(name):
    exe = os.path.join(SAMPLES, name)
    outdir = tempfile.mkdtemp(prefix="gputool-omp-gpu-")
    code0, out0, err0 = run([exe], env=ENV)
    code1, out1, err1 = run([exe], env=dict(ENV, OMP_TOOL_LIBRARIES=LIB, GPUTOOL_OUTPUT=outdir))
    print("  %s: %s" % (name, out0.strip()))
    check(code0 == code1 == 0 and out0 == out1,
          "output or exit code changed: %r %r\n%s\n%s" % (out0, out1, err0, err1))
    files = [f for f in os.listdir(outdir) if f.endswith(".gtprof")]
    check(len(files) == 1, "profiles: %s" % files)
    code, js, err = run([GPUTOOL, "report", os.path.join(outdir, files[0]), "--format", "json"],
                        env={"LD_LIBRARY_PATH": ENV.get("LD_LIBRARY_PATH", "")})
    check(code == 0, "gputool report: %s" % err)
    if SAVE:
        with open(os.path.join(SAVE, name + ".json"), "w") as f:
            f.write(js)
        with open(os.path.join(SAVE, "reports.txt"), "a") as f, \
                open(os.path.join(outdir, files[0][:-len(".gtprof")] + ".txt")) as r:
            f.write("==== %s\n" % name)
            shutil.copyfileobj(r, f)
    return Profile(json.loads(js))


def sums(p, nodes):
    out = {}
    for n in nodes:
        for k, v in inclusive(n).items():
            out[k] = out.get(k, 0) + v
    return out


def compare(p, label, nodes, want):
    got = sums(p, nodes)
    bad = []
    for m in METRICS:
        if m in want or got.get(m):
            mark = "" if got.get(m, 0) == want.get(m, 0) else "   <-- expected %d" % want.get(m, 0)
            print("    %-26s %-22s %10d%s" % (label, m, got.get(m, 0), mark))
            if mark:
                bad.append(m)
    for m in ("OMP_TGT_TIME", "OMP_TGT_KERNEL_TIME", "OMP_TGT_H2D_TIME", "OMP_TGT_D2H_TIME"):
        if got.get(m):
            print("    %-26s %-22s %10.1f us" % (label, m, got[m] / 1e3))
    check(not bad, "%s: %s differ" % (label, ", ".join(bad)))


def under(p, kind, caller):
    return [n for n in p.find(kind) if caller in p.names(n)]


def every_op_in_a_construct(p):
    """The samples call no omp_target_* functions: every operation belongs to
    a construct, also those an asynchronous plugin completes after the
    construct's end (deferred releases of nowait targets)."""
    for n in p.doc["nodes"]:
        if (n.get("name") or "") in OPS:
            dev = p.nodes[n["parent"]]
            check((dev.get("name") or "").startswith("device ") and
                  p.nodes[dev["parent"]].get("name") in CONSTRUCTS,
                  "%s outside a construct: %s" % (n["name"], "/".join(p.names(n))))


def devices(p):
    print("  devices: %s; images: %s" % (p.meta("omp_devices"), p.meta("omp_images")))
    print("  timing: %s" % p.meta("omp_target_timing"))
    every_op_in_a_construct(p)
    if HOST_OFFLOAD:
        return
    check("sm_" in (p.meta("omp_devices") or ""), "not on an NVIDIA device")
    for n in p.doc["nodes"]:
        if n.get("kind") == "name" and (n.get("name") or "").startswith("device"):
            check(n["name"].startswith("device 0 (sm_"), "device node %s" % n["name"])


def site(calls, n):
    return {"OMP_TGT_COUNT": calls, "OMP_TGT_KERNEL_COUNT": calls,
            "OMP_TGT_ALLOC_COUNT": 3 * calls, "OMP_TGT_ALLOC_BYTES": 3 * calls * n * D,
            "OMP_TGT_H2D_COUNT": 2 * calls, "OMP_TGT_H2D_BYTES": 2 * calls * n * D,
            "OMP_TGT_D2H_COUNT": 2 * calls, "OMP_TGT_D2H_BYTES": 2 * calls * n * D,
            "OMP_TGT_DELETE_COUNT": 3 * calls}


def test_transfer():
    p = profile_of("transfer")
    devices(p)
    N = 4096
    compare(p, "site < path_small", under(p, "<omp target>", "path_small"), site(3, 256))
    compare(p, "site < path_large", under(p, "<omp target>", "path_large"), site(5, 1024))
    compare(p, "resident: enter data", under(p, "<omp target enter data>", "resident"),
            {"OMP_TGT_COUNT": 1, "OMP_TGT_ALLOC_COUNT": 2, "OMP_TGT_ALLOC_BYTES": 2 * N * D,
             "OMP_TGT_H2D_COUNT": 1, "OMP_TGT_H2D_BYTES": N * D})
    compare(p, "resident: target", under(p, "<omp target>", "resident"),
            {"OMP_TGT_COUNT": 1, "OMP_TGT_KERNEL_COUNT": 1})
    compare(p, "resident: update", under(p, "<omp target update>", "resident"),
            {"OMP_TGT_COUNT": 2, "OMP_TGT_H2D_COUNT": 1, "OMP_TGT_H2D_BYTES": 100 * D,
             "OMP_TGT_D2H_COUNT": 1, "OMP_TGT_D2H_BYTES": 200 * D})
    compare(p, "resident: exit data", under(p, "<omp target exit data>", "resident"),
            {"OMP_TGT_COUNT": 1, "OMP_TGT_D2H_COUNT": 1, "OMP_TGT_D2H_BYTES": N * D,
             "OMP_TGT_DELETE_COUNT": 2})
    kernels = p.find("<omp kernel>")
    check(kernels and all(p.nodes[p.nodes[k["parent"]]["parent"]]["name"] == "<omp target>"
                          for k in kernels), "a kernel outside its target construct")


def test_nowait():
    p = profile_of("nowait")
    devices(p)
    k, chunk = 12, 512
    every = p.find("<omp target>")
    rs = under(p, "<omp target>", "async_site")
    check(len(rs) == len(every), "targets outside async_site")
    compare(p, "async_site (nowait)", rs,
            {"OMP_TGT_COUNT": k, "OMP_TGT_KERNEL_COUNT": k, "OMP_TGT_ALLOC_COUNT": k,
             "OMP_TGT_ALLOC_BYTES": k * chunk * D, "OMP_TGT_H2D_COUNT": k,
             "OMP_TGT_H2D_BYTES": k * chunk * D, "OMP_TGT_D2H_COUNT": k,
             "OMP_TGT_D2H_BYTES": k * chunk * D, "OMP_TGT_DELETE_COUNT": k})


def test_threads():
    p = profile_of("threads")
    devices(p)
    k, s = 40, 256
    rs = p.find("<omp target>")
    check(all("offload_team" in p.names(r) and "<omp parallel>" in p.names(r) for r in rs),
          "a target outside offload_team's parallel region")
    compare(p, "offload_team (4 threads)", rs,
            {"OMP_TGT_COUNT": k, "OMP_TGT_KERNEL_COUNT": k, "OMP_TGT_ALLOC_COUNT": k,
             "OMP_TGT_ALLOC_BYTES": k * s * D, "OMP_TGT_H2D_COUNT": k,
             "OMP_TGT_H2D_BYTES": k * s * D, "OMP_TGT_D2H_COUNT": k,
             "OMP_TGT_D2H_BYTES": k * s * D, "OMP_TGT_DELETE_COUNT": k})
    # Per thread: each device node under the constructs holds the threads'
    # statistics of OMP_TGT_COUNT (how many threads, least and most each).
    stats = []
    for r in rs:
        for dev in p.children.get(r["id"], []):
            t = dev.get("metrics", {}).get("OMP_TGT_COUNT", {}).get("threads")
            if t:
                stats.append((t["threads"], t["min"], t["max"]))
    print("    regions per thread (threads, min, max) per context: %s" % stats)
    if len(stats) == 1:
        check(stats[0] == (4, 10, 10), "regions per thread %s" % stats)
    else:
        check(stats and max(n for n, _, _ in stats) <= 4 and sum(n for n, _, _ in stats) >= 4,
              "regions per thread %s" % stats)


main([("transfer on the GPU: bytes and counts per context", test_transfer),
      ("nowait on the GPU", test_nowait),
      ("threads offloading at once on the GPU", test_threads)])
