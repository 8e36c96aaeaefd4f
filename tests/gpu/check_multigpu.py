# SPDX-License-Identifier: MIT
"""On a machine with two NVIDIA GPUs (docs/GPU-VALIDATION.md, "Several GPUs").

  check_multigpu.py multigpu LIBGPUTOOL GPUTOOL MULTIGPU_EXE
      samples/cuda/multigpu under the tool: kernels per device and per
      thread, per-device busy time, blame per device (a sync on device 0
      does not blame device 1's kernel), peer copies with bytes and
      direction.
  check_multigpu.py omp LIBGPUTOOL GPUTOOL DEVICES_EXE
      samples/omp-target/devices (two threads, target regions on device 0
      and device 1) with OMPT and CUDA measured at once: REPS regions per
      thread, every kernel under its <omp kernel> with OMPT's count, busy
      time on both devices (env: the LLVM runtime, GT_RUN_LD_LIBRARY_PATH
      and GT_RUN_LD_PRELOAD, as check_omp_cupti.py takes it).
  check_multigpu.py ranks GPUTOOL RUN_DIR RANKS [omp]
      a run of samples/cuda/ranks (with omp: samples/omp-target/ranks) under
      `mpirun -np RANKS gputool run`: every
      rank's kernels under its call site, each rank on its device (the
      per-device busy time of its profile), the merged per-rank figures.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from gtrun import check, close, main, profiles, run  # noqa: E402

SPIN, LONG, PEER = 40e6, 300e6, 64 << 20


def busy(p):
    """{device: busy ns} from the profile's gpu_busy_ns ("D:NS D:NS ...")."""
    v = p.meta("gpu_busy_ns") or ""
    return {int(d): int(ns) for d, ns in (x.split(":") for x in v.split())}


def fns(p, n):
    """The function names on n's path, without C++ parameters."""
    return [x.split("(")[0] for x in p.names(n)]


def under(p, fn, metric, leaf=None):
    """metric summed at nodes below a frame of function fn (and named leaf)."""
    return sum(p.excl(n, metric) for n in p.doc["nodes"]
               if fn in fns(p, n) and (leaf is None or n.get("name") == leaf))


def test_multigpu():
    lib, gputool, exe = (os.path.abspath(a) for a in sys.argv[2:5])
    outdir = tempfile.mkdtemp(prefix="gputool-multigpu-")
    code0, out0, err0 = run([exe])
    code1, out1, err = run([exe], env={"CUDA_INJECTION64_PATH": lib, "GPUTOOL_OUTPUT": outdir})
    check(code0 == code1 == 0, "exit %d / %d: %s %s" % (code0, code1, err0, err))
    print("  bare:       %s" % out0.strip())
    print("  under tool: %s" % out1.strip())
    m = re.search(r"devices (\d+) peer (-?\d+) sync0_ms ([\d.]+) sync1_ms ([\d.]+)", out1)
    check(m is not None, "no figures from the program")
    devices, can, sync0, sync1 = int(m.group(1)), int(m.group(2)), float(m.group(3)) * 1e6, float(m.group(4)) * 1e6
    p = profiles(gputool, outdir)[0]
    # Two threads, one per device: 3 kernels on device 0, 1 on device 1,
    # from one call site (on_device): 4 there, per thread 1 and 3.
    k = [n for n in p.doc["nodes"] if "on_device" in fns(p, n) and "GKER_COUNT" in n.get("metrics", {})]
    count = sum(p.excl(n, "GKER_COUNT") for n in k)
    per = [p.per_thread(n, "GKER_COUNT") for n in k]
    print("  on_device: %d kernels, per thread (threads, min, max, sum) %s" % (count, per))
    check(count == 4 and any(t == (2, 1, 3, 4) for t in per), "on_device kernels %d, per thread %s" % (count, per))
    # Per-device busy time: device 0 runs 3 + 1 spins, device 1 one spin and
    # the long one (copies add a little to both).
    b = busy(p)
    print("  busy per device (ms): %s; expected >= %.0f and >= %.0f" %
          ({d: round(v / 1e6, 1) for d, v in b.items()}, 4 * SPIN / 1e6, (SPIN + LONG) / 1e6))
    check(sorted(b) == [0, 1], "devices in gpu_busy_ns: %s" % sorted(b))
    check(b.get(0, 0) >= 4 * SPIN * 0.99 and b.get(1, 0) >= (SPIN + LONG) * 0.99, "busy per device %s" % b)
    check(b.get(0, 0) < 4 * SPIN * 1.5 and b.get(1, 0) < (SPIN + LONG) * 1.2, "busy per device %s" % b)
    # Blame per device: waiting for device 0 only (sync_dev0) is blamed on
    # the device-0 kernel; device 1's long kernel is blamed for sync_dev1.
    idle0, idle1 = under(p, "sync_dev0", "CPU_IDLE"), under(p, "sync_dev1", "CPU_IDLE")
    launches = [n for n in p.doc["nodes"] if (n.get("name") or "").split("(")[0] == "launch_both" and
                n.get("kind") in ("frame", "inline")]
    cause = {n["line"]: sum(p.excl(x, "CPU_IDLE_CAUSE") for x in p.doc["nodes"] if n["id"] in
                            [y["id"] for y in p.path(x)]) for n in launches}
    lines = sorted(cause)
    print("  CPU_IDLE at sync_dev0 %.1f ms (the program waited %.1f), at sync_dev1 %.1f ms (%.1f)" %
          (idle0 / 1e6, sync0 / 1e6, idle1 / 1e6, sync1 / 1e6))
    print("  CPU_IDLE_CAUSE at launch_both's lines %s (ms): %s" % (lines, [round(cause[l] / 1e6, 1) for l in lines]))
    check(close(idle0, sync0, 0.10) and close(idle1, sync1, 0.10), "CPU_IDLE at the two syncs")
    if check(len(lines) == 2, "launch_both's two launch lines: %s" % lines):
        # The first line launches on device 1 (LONG), the second on device 0.
        check(close(cause[lines[0]], idle1, 0.10), "device 1's launch blamed %.1f ms, the wait for it %.1f ms" %
              (cause[lines[0]] / 1e6, idle1 / 1e6))
        check(close(cause[lines[1]], idle0, 0.10), "device 0's launch blamed %.1f ms, the wait for it %.1f ms" %
              (cause[lines[1]] / 1e6, idle0 / 1e6))
    # Peer copies: bytes, count and direction.
    for fn, name, nbytes, n in (("copy_0to1", "device 0 -> device 1", 2 * PEER, 2),
                                ("copy_1to0", "device 1 -> device 0", PEER // 4, 1)):
        got = under(p, fn, "GXCOPY_D2D_BYTES", name)
        cnt = under(p, fn, "GXCOPY_D2D_COUNT", name)
        anywhere = under(p, fn, "GXCOPY_D2D_BYTES")
        print("  %s: %s %d bytes in %d copies (%d bytes under it in all); peer access %d" %
              (fn, name, got, cnt, anywhere, can))
        check(got == nbytes and cnt == n, "%s: %d bytes, %d copies named %r" % (fn, got, cnt, name))
    code, text, _ = run([gputool, "report", outdir])
    blame = [l for l in text.splitlines() if "GPU_IDLE_CAUSE_D" in l or re.search(r"device [01]", l)]
    print("\n".join("  | " + l for l in blame[:12]))


def devices():
    """GPUs on this machine: rank r of the ranks samples takes device r % devices()."""
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
        return max(1, len([l for l in out.splitlines() if l.startswith("GPU ")]))
    except OSError:
        return 2


def mpi_waits(ps, ranks):
    """The MPI layer (docs/MPI.md): each rank's MPI_Barrier under main, once;
    its MPI_IDLE there is the time the rank measured in the barrier itself
    (GT_RANKS_OUT: the ranks' output, "barrier_ms"), less the barrier's own
    cost, for every rank but the last to arrive; the last rank's work
    carries the others' wait as its cause."""
    idle, cause = {}, {}
    for p in ps:
        r = int(p.process()["rank"])
        bar = [n for n in p.find("<mpi MPI_Barrier>") if p.names(n)[:1] == ["main"]]
        check(len(bar) == 1 and p.excl(bar[0], "REGION_COUNT") == 1,
              "rank %d: <mpi MPI_Barrier> under main %s" % (r, [p.names(n) for n in p.find("<mpi MPI_Barrier>")]))
        idle[r] = sum(p.excl(n, "MPI_IDLE") for n in bar)
        cause[r] = sum(p.excl(n, "MPI_IDLE_CAUSE") for n in p.doc["nodes"])
        where = sorted({" > ".join(p.names(n)) for n in p.doc["nodes"] if p.excl(n, "MPI_IDLE_CAUSE")})
        print("  rank %d: MPI_IDLE at the barrier %.1f ms, MPI_IDLE_CAUSE %.1f ms at %s" %
              (r, idle[r] / 1e6, cause[r] / 1e6, where))
    own = {}
    if os.environ.get("GT_RANKS_OUT"):
        with open(os.environ["GT_RANKS_OUT"]) as f:
            own = {int(r): float(ms) * 1e6 for r, ms in re.findall(r"rank (\d+) .*barrier_ms ([\d.]+)", f.read())}
    check(sorted(own) == list(range(ranks)), "the ranks' own barrier times: %s" % own)
    if len(own) != ranks:
        return
    last = min(own, key=own.get)
    print("  the ranks measured in the barrier (ms): %s; the last to arrive: rank %d" %
          ({r: round(v / 1e6, 1) for r, v in sorted(own.items())}, last))
    for r in range(ranks):
        if r != last:
            check(abs(idle[r] - own[r]) <= 0.05 * own[r] + 2e6,
                  "rank %d: MPI_IDLE %.1f ms, it measured %.1f ms" % (r, idle[r] / 1e6, own[r] / 1e6))
    total = sum(idle.values())
    check(abs(cause[last] - total) <= 0.05 * total + 2e6,
          "the last rank's cause %.1f ms, the others waited %.1f ms" % (cause[last] / 1e6, total / 1e6))


def test_ranks():
    gputool, d, ranks = os.path.abspath(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    ndev = devices()
    omp = len(sys.argv) > 5 and sys.argv[5] == "omp"
    fn, metric, spin = ("offload", "OMP_TGT_KERNEL_COUNT", 0) if omp else ("launch_on", "GKER_COUNT", 50e6)
    ps = profiles(gputool, d)
    # Helpers the ranks started (the ptxas LLVM's JIT runs) have profiles of
    # their own, naming their parent.
    pids = {p.process()["pid"] for p in ps}
    helpers = [p for p in ps if int(p.meta("ppid") or 0) in pids]
    ps = [p for p in ps if p not in helpers]
    print("  %d profiles of ranks, %d of helpers they started (%s)" %
          (len(ps), len(helpers), sorted({os.path.basename(h.process()["exe"] or "?") for h in helpers})))
    check(len(ps) == ranks, "%d profiles for %d ranks" % (len(ps), ranks))
    for p in ps:
        r = int(p.process()["rank"])
        k = under(p, fn, metric)
        b = busy(p)
        print("  rank %d: %d kernels under %s, busy per device (ms) %s" %
              (r, k, fn, {dv: round(v / 1e6, 2) for dv, v in b.items()}))
        check(k == r + 1, "rank %d: %d kernels, expected %d" % (r, k, r + 1))
        check(list(b) == [r % ndev] and b[r % ndev] >= (r + 1) * spin * 0.99 and b[r % ndev] > 0,
              "rank %d on device %s" % (r, b))
    if not omp:
        mpi_waits(ps, ranks)
    code, js, err = run([gputool, "report", d, "--format", "json"])
    doc = json.loads(js)
    node = [n for n in doc["nodes"] if (n.get("name") or "").split("(")[0] == fn]
    per = [0] * ranks
    rank_of = {x["index"]: x["rank"] for x in doc["processes"]}
    for n in node:
        for i, v in enumerate(n["metrics"].get(metric, {}).get("per_process", [])):
            per[rank_of[i]] += v
    print("  merged: %s per rank under %s %s" % (metric, fn, per))
    check(per == [r + 1 for r in range(ranks)], "merged per-rank kernels %s" % per)
    code, text, _ = run([gputool, "report", d, "--metric", "GKER"])
    # rank, pid, program, host, threads, wall, total, %, then the GPUs column
    rows = re.findall(r"^\s+(\d+)\s+\d+ \S+\s+(?:\S+\s+)?\d+\s+[\d.]+\s+\S+\s+\S+\s+(\d+):([\d.]+)\s", text, re.M)
    print("  merged report, per rank: device and busy s %s" % rows)
    check([(int(r), int(dv)) for r, dv, _ in rows] == [(r, r % ndev) for r in range(ranks)],
          "the processes table's devices: %s" % rows)


def test_omp():
    lib, gputool, exe = (os.path.abspath(a) for a in sys.argv[2:5])
    base = {k: os.environ["GT_RUN_" + k] for k in ("LD_LIBRARY_PATH", "LD_PRELOAD") if os.environ.get("GT_RUN_" + k)}
    outdir = tempfile.mkdtemp(prefix="gputool-omp-devices-")
    code0, out0, _ = run([exe], env=base)
    code1, out1, err = run([exe], env=dict(base, OMP_TOOL_LIBRARIES=lib, CUDA_INJECTION64_PATH=lib,
                                           GPUTOOL_OUTPUT=outdir))
    check(code0 == code1 == 0 and out0 == out1, "output or exit code changed: %r %r" % (out1, err[-1500:]))
    print("  %s" % out1.strip())
    p = profiles(gputool, outdir)[0]
    kernels = [n for n in p.find("<omp kernel>")]
    ompt = sum(p.incl(n, "OMP_TGT_KERNEL_COUNT") for n in kernels)
    cuda = sum(p.incl(n, "GKER_COUNT") for n in kernels)
    regions = [n for n in p.doc["nodes"] if n.get("name") == "<omp target>" and "on_devices" in fns(p, n)]
    per = [p.per_thread(n, "OMP_TGT_KERNEL_COUNT") for n in p.doc["nodes"] if "on_devices" in fns(p, n) and
           p.per_thread(n, "OMP_TGT_KERNEL_COUNT")[0]]
    b = busy(p)
    print("  <omp target> contexts under on_devices: %d; OMPT kernels %d, CUDA kernels under them %d" %
          (len(regions), ompt, cuda))
    print("  per thread (threads, min, max, sum): %s; busy per device (ms) %s; devices %s" %
          (per, {d: round(v / 1e6, 2) for d, v in b.items()}, p.meta("omp_devices")))
    check(ompt == 20 and cuda == 20, "kernels: OMPT %d, CUDA %d, expected 20" % (ompt, cuda))
    # One context per device's kernel, or one for both: each thread ran 10.
    check(per and sum(t[3] for t in per) == 20 and all(t[1] == t[2] == 10 for t in per),
          "10 regions per thread: %s" % per)
    check(sorted(b) == [0, 1] and all(b.values()), "busy on both devices: %s" % b)


if sys.argv[1] == "omp":
    main([("OpenMP target on two GPUs, with CUDA", test_omp)])
elif sys.argv[1] == "multigpu":
    main([("CUDA on two GPUs: threads, streams, blame per device, peer copies", test_multigpu)])
else:
    main([("MPI + %s, one GPU per rank" % ("OpenMP target" if sys.argv[5:] == ["omp"] else "CUDA"), test_ranks)])
