#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`gputool report` on a synthetic run whose numbers are known.

Usage: check_report.py GPUTOOL SCHEMA [--mpirun MPIRUN]

Three processes (ranks 0-2) of two threads each, with CPU time, GPU kernel,
copy and sync time, a context only one rank has, and a name that needs
escaping. Checks every node's statistics in the JSON against the model,
the JSON against docs/report.schema.json, the importance metrics, that
text, JSON, folded stacks and the HTML page agree on totals, the Chrome
trace from recorded traces (and the refusal without them), broken and
missing profiles, usage errors, and that `mpirun -np P gputool report`
gives the same JSON as one process."""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gtfiles  # noqa: E402
from gtfiles import NAME  # noqa: E402

GPUTOOL, SCHEMA = sys.argv[1], sys.argv[2]
MPIRUN = sys.argv[sys.argv.index("--mpirun") + 1] if "--mpirun" in sys.argv else None
MPIFLAGS = ["--allow-run-as-root", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1"]
MS = 1000000
KINDS = {0: "root", 1: "frame", 2: "placeholder", 3: "name"}
# The device's time; GMEM and GSYNC are the host's (allocating, waiting).
GPU_TIME = ("GKER", "GXCOPY_H2D", "GXCOPY_D2H", "GMSET")
WEIRD = 'we;ird "name" </script><b>'
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL " + msg)


def check(cond, msg):
    if not cond:
        fail(msg)
    return cond


def run(args, env=None):
    p = subprocess.run([GPUTOOL] + args, capture_output=True, timeout=120, env=env)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def build(r):
    p = gtfiles.Profile({"rank": str(r), "pid": str(100 + r), "host": "node%d" % (r // 2),
                         "exe": "/bin/app", "cmdline": "/bin/app -x", "wall_ns": str((r + 1) * 10 ** 9)},
                        threads=2)
    main = p.frame(0, "main", line=10)
    work = p.frame(main, "work", line=20)
    p.value(work, 0, "CPUTIME", (r + 1) * 10 * MS)
    p.value(work, 1, "CPUTIME", 5 * MS)
    p.value(main, 0, "CPUTIME", 1 * MS)
    if r == 2:
        p.value(p.frame(main, "io", line=30), 0, "CPUTIME", 7 * MS)
    solve = p.frame(main, "solve", line=40)
    kern = p.node(p.ph(solve, "<gpu kernel>"), NAME, "axpy")
    p.value(kern, 0, "GKER", (r + 1) * 4 * MS)
    p.value(kern, 0, "GKER_COUNT", 10)
    sync = p.ph(solve, "<gpu sync>")
    p.value(sync, 0, "GSYNC", 2 * MS)
    p.value(sync, 0, "CPUTIME", 3 * MS)
    h2d = p.ph(p.frame(main, "copy", line=50), "<gpu copy h2d>")
    p.value(h2d, 0, "GXCOPY_H2D", 2 * MS)
    p.value(h2d, 0, "GXCOPY_H2D_BYTES", 1 << 20)
    p.value(p.frame(main, WEIRD, line=60), 1, "CPUTIME", 1 * MS)
    # An OpenMP target construct: its kernel under <omp kernel> under the
    # construct's device, all one operation.
    dev = p.node(p.ph(p.frame(main, "offload", line=70), "<omp target>"), NAME, "device 0 (sm_90)")
    okern = p.node(p.ph(p.ph(dev, "<omp kernel>"), "<gpu kernel>"), NAME, "omp_kernel")
    p.value(okern, 0, "GKER", 1 * MS)
    return p


def model_paths(p):
    """{path: {metric: {thread: value}}} of a gtfiles.Profile."""
    out = {}

    def path(i):
        parts = []
        while i:
            parent, kind, name, file, line, _mod, _off = p.nodes[i]
            parts.append((KINDS[kind], p.strings[name] if name is not None else None,
                          p.strings[file] if file is not None else None, line))
            i = parent
        return tuple(reversed(parts))
    for i in range(len(p.nodes)):
        out.setdefault(path(i), {})
    for (node, m, t), v in p.values.items():
        name = p.strings[p.metrics[m][0]]
        out[path(node)].setdefault(name, {})
        out[path(node)][name][t] = out[path(node)][name].get(t, 0) + v
    return out


def expected(profiles):
    """Per path and metric: exclusive and inclusive value of each process,
    and the exclusive value of each (process, thread)."""
    models = [model_paths(p) for p in profiles]
    paths = set()
    for m in models:
        paths |= set(m)
    exp = {}
    for path in paths:
        e = {}
        for k, m in enumerate(models):
            for sub, metrics in m.items():
                if sub[:len(path)] != path:
                    continue
                for metric, threads in metrics.items():
                    d = e.setdefault(metric, {"excl": [0] * len(models), "incl": [0] * len(models), "thr": []})
                    d["incl"][k] += sum(threads.values())
                    if sub == path:
                        d["excl"][k] += sum(threads.values())
                        d["thr"] += [v for v in threads.values() if v]
        exp[path] = e
    return exp


def json_paths(doc):
    byid = {n["id"]: n for n in doc["nodes"]}
    out = {}
    for n in doc["nodes"]:
        parts, x = [], n
        while x["parent"] is not None:
            parts.append((x["kind"], x["name"], x["file"], x["line"]))
            x = byid[x["parent"]]
        out[tuple(reversed(parts))] = n
    return out


def check_stat(where, st, per, n):
    nz = [v for v in per if v]
    want = {"sum": sum(per), "max": max(per), "min": min(per), "processes": len(nz)}
    for k, v in want.items():
        check(st[k] == v, "%s %s = %s, expected %s" % (where, k, st[k], v))
    mean = sum(per) / n
    check(abs(st["mean"] - mean) <= 1e-6 * max(mean, 1), "%s mean %s, expected %s" % (where, st["mean"], mean))
    if mean:
        check(abs(st["imbalance"] - max(per) / mean) < 1e-6, "%s imbalance %s" % (where, st["imbalance"]))
    if nz:
        check(per[st["max_process"]] == max(per), "%s max_process %s" % (where, st["max_process"]))


def check_json(doc, profiles):
    n = len(profiles)
    check(doc["run"]["processes"] == n and doc["run"]["threads"] == 2 * n, "run %s" % doc["run"])
    check([p["rank"] for p in doc["processes"]] == list(range(n)), "processes not by rank")
    exp, got = expected(profiles), json_paths(doc)
    for path, metrics in exp.items():
        node = got.get(path)
        if not check(node is not None, "no node for %s" % (path,)):
            continue
        where = "/".join(str(x[1]) for x in path) or "<root>"
        for metric, d in metrics.items():
            c = node["metrics"].get(metric)
            if not check(c is not None, "%s lacks %s" % (where, metric)):
                continue
            check_stat("%s %s incl" % (where, metric), c["incl"], d["incl"], n)
            check(("excl" in c) == any(d["excl"]), "%s %s: excl present iff measured there" % (where, metric))
            if "excl" in c:
                check_stat("%s %s excl" % (where, metric), c["excl"], d["excl"], n)
            check(c.get("per_process") == d["incl"], "%s %s per_process %s" % (where, metric, c.get("per_process")))
            t = c.get("threads", {"threads": 0})
            check(t["threads"] == len(d["thr"]), "%s %s threads %s" % (where, metric, t))
            if d["thr"]:
                check(t["min"] == min(d["thr"]) and t["max"] == max(d["thr"]), "%s %s thread min/max %s" % (where, metric, t))
    check(len(got) == len(exp), "%d nodes in JSON, %d in the model" % (len(got), len(exp)))
    totals = {m["name"]: m["total"] for m in doc["metrics"]}
    root = exp[()]
    for metric, d in root.items():
        check(totals.get(metric) == sum(d["incl"]), "total of %s" % metric)
    # Importance (ICS'20 eq. 1-3).
    im = doc["importance"]
    C = sum(root["CPUTIME"]["incl"])
    G = sum(sum(root[m]["incl"]) for m in GPU_TIME if m in root)
    check(im["C_P"] == C and im["G_P"] == G, "C_P %s G_P %s, expected %s %s" % (im["C_P"], im["G_P"], C, G))
    check(abs(im["I_C_P"] - max(C - G, 0) / C) < 1e-6, "I_C_P %s" % im["I_C_P"])
    check(im["bound"] == ("cpu" if (C - G) / C >= 0.5 else "gpu"), "bound %s" % im["bound"])
    # I_C is capped by the parent's: it never grows going down the tree.
    uncovered = {}
    for path in sorted(got, key=len):
        m = exp[path]
        c = sum(m.get("CPUTIME", {"incl": [0]})["incl"])
        g = sum(sum(m[x]["incl"]) for x in GPU_TIME if x in m)
        uncovered[path] = min(max(c - g, 0), uncovered.get(path[:-1], max(C - G, 0)))
    for path, node in got.items():
        m = exp[path]
        g = sum(sum(m[x]["incl"]) for x in GPU_TIME if x in m)
        check(abs(node["importance"]["I_C"] - uncovered[path] / C) < 1e-6, "I_C at %s" % (path,))
        check(abs(node["importance"]["I_G"] - g / G) < 1e-6, "I_G at %s" % (path,))
    sites = im["gpu_sites"]
    check([s["value"] for s in sites] == sorted((s["value"] for s in sites), reverse=True), "sites not sorted")
    check(sites and doc["nodes"][sites[0]["node"]]["name"] == "<gpu kernel>" and sites[0]["metric"] == "GKER",
          "first GPU site %s" % (sites[:1],))
    check(len(sites) == 3, "%d GPU sites, expected 3 (kernel, copy, omp target; a sync is host time)"
          % len(sites))
    # Each operation counted once: the sites hold all GPU time, no more.
    check(sum(s["value"] for s in sites) == G, "sites sum to %s, G_P %s" % (sum(s["value"] for s in sites), G))
    return totals


def text_total(out):
    m = re.search(r"metric\s+(\S+), total ([0-9.]+) (\S+)", out)
    scale = {"s": 1e9, "ms": 1e6, "us": 1e3, "#": 1, "K": 1e3, "M": 1e6, "G": 1e9}
    return float(m.group(2)) * scale[m.group(3)] if m else None


def close(a, b, rel=1e-3):
    return a is not None and abs(a - b) <= rel * max(abs(b), 1)


def html_data(page):
    m = re.search(r'<script type="application/json" id="gt-data">(.*?)</script>', page, re.S)
    return json.loads(m.group(1)) if m else None


def check_formats(d, profiles, doc, totals):
    for metric, total in (("CPUTIME", totals["CPUTIME"]), ("GKER", totals["GKER"]),
                          ("GPUOP", doc["importance"]["G_P"])):
        code, out, err = run(["report", d, "--metric", metric])
        check(code == 0 and close(text_total(out), total), "text total of %s: %s (%s)" % (metric, text_total(out), err))
        code, out, err = run(["report", d, "--metric", metric, "--format", "folded"])
        lines = out.splitlines()
        check(code == 0 and lines and lines[0].startswith("# gputool folded stacks: metric %s, values in " % metric),
              "folded: the first line names %s and its unit: %s" % (metric, lines[:1]))
        lines = lines[1:]
        check(all(re.match(r"^.+ \d+$", l) for l in lines), "folded lines for %s: %s" % (metric, err))
        check(sum(int(l.rsplit(" ", 1)[1]) for l in lines) == total, "folded sum of %s" % metric)
        code, out, err = run(["report", d, "--metric", metric, "--format", "json"])
        check(code == 0 and json.loads(out)["metric"] == metric, "json --metric %s" % metric)
    code, out, _ = run(["report", d, "--format", "folded"])
    check(any("we:ird" in l for l in out.splitlines()) and not any(WEIRD in l for l in out.splitlines()),
          "folded: a ';' in a name must not split the frame")
    code, page, err = run(["report", d, "--format", "html"])
    data = html_data(page)
    check(code == 0 and data == doc, "the page's data differs from the JSON (%s)" % err)
    check("</script><b>" not in page.split('id="gt-data">', 1)[1].split("</script>", 1)[0],
          "a name ends the page's data")
    check(not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page), "the page loads something")
    # Views.
    code, out, _ = run(["report", d, "--view", "bottom-up"])
    check(code == 0 and re.search(r"work \(app\.c\)\n.*< main \(app\.c:10\)", out), "bottom-up view:\n" + out)
    code, out, _ = run(["report", d, "--view", "flat"])
    check(code == 0 and re.search(r"\s+77\.3%\s+75\.000\s+77\.3%\s+75\.000\s+1\s+work \(app\.c\)", out), "flat view:\n" + out)
    code, out, _ = run(["report", d])
    check(code == 0 and "processes    3 (ranks 0-2) on 2 hosts" in out, "text header:\n" + out)
    check(re.search(r"^\s+2\s+102\s+app\s+node1\s+2\s+3\.000\s+47\.000\s+48\.5%\s+47\.000$", out, re.M), "process table:\n" + out)
    check("CPU-bound" in out and "GPU operations by importance" in out, "guidance missing:\n" + out)
    # Every line within the default width (160), the merged runs' too.
    wide = [l for l in out.splitlines() if len(l) > 160]
    check(not wide, "lines wider than 160:\n" + "\n".join(wide))
    # I_C of work: its 75 s of CPU time, capped by main's uncovered 66.0 %.
    check(re.search(r"77\.3%\s+75\.000\s+75\.000\s+15\.000\s+25\.000\s+35\.000\s+1\.40\s+66\.0%\s+0\.0%\s+work \(app\.c:20\)", out),
          "top-down row of work:\n" + out)


def write_traces(d, profiles):
    for r, p in enumerate(profiles):
        t = gtfiles.Trace()
        s = t.strs("main", "axpy")
        t.tracks([(1, gtfiles.CPU, 0, 1000 + r, s[0]), (2, gtfiles.CPU, 1, 2000 + r, None),
                  (10, gtfiles.GPU, 0, 7, None)])
        kern = [i for i, n in enumerate(p.nodes) if n[2] is not None and p.strings[n[2]] == "axpy"][0]
        base = 5 * 10 ** 9 + r * 1000
        t.events(1, [(base, 900000, "region", None, 1, 0), (base + 1000, 2000, "api", None, kern, 11),
                     (base + 5000, 2000, "api", None, kern, 12)])
        t.events(2, [(base + 100, 50000, "region", None, None, 0)])
        t.events(10, [(base + 4000, 30000, "kernel", s[1], kern, 11), (base + 40000, 30000, "kernel", s[1], kern, 12)])
        t.write(os.path.join(d, "app-%d-%d.gttrace" % (r, 100 + r)), end=(r != 1))


def check_chrome(d, profiles):
    code, out, err = run(["report", d, "--format", "chrome"])
    check(code == 1 and "no trace recorded" in err and not out, "chrome without traces: %d %r" % (code, err))
    write_traces(d, profiles)
    code, out, err = run(["report", d, "--format", "chrome"])
    check(code == 0, "chrome: exit %d: %s" % (code, err))
    check("no END chunk" in err, "a trace without END should be noted: %r" % err)
    try:
        doc = json.loads(out)
    except ValueError as e:
        fail("chrome output is not JSON: %s" % e)
        return
    ev = doc.get("traceEvents")
    if not check(isinstance(ev, list) and ev, "no traceEvents"):
        return
    for e in ev:
        ok = isinstance(e, dict) and e.get("ph") in ("X", "M", "s", "f") and isinstance(e.get("pid"), int) \
            and isinstance(e.get("name"), str)
        if e.get("ph") in ("X", "s", "f"):
            ok = ok and isinstance(e.get("tid"), int) and isinstance(e.get("ts"), (int, float)) and e["ts"] >= 0
        if e.get("ph") == "X":
            ok = ok and isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0
        if not check(ok, "malformed event %s" % e):
            break
    xs = [e for e in ev if e["ph"] == "X"]
    check(len(xs) == 3 * 6, "%d complete events, expected 18" % len(xs))
    check(min(e["ts"] for e in xs) == 0, "times should start at 0 on each host")
    names = [e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"]
    check(names.count("GPU 0 stream 7") == 3 and names.count("main") == 3, "track names %s" % names)
    procs = [e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"]
    check(procs == ["rank 0 (pid 100)", "rank 1 (pid 101)", "rank 2 (pid 102)"], "process names %s" % procs)
    s = {e["id"]: e for e in ev if e["ph"] == "s"}
    f = {e["id"]: e for e in ev if e["ph"] == "f"}
    check(len(s) == 6 and set(s) == set(f), "flows: %d starts, %d ends" % (len(s), len(f)))
    check(all(f[i].get("bp") == "e" and f[i]["ts"] >= s[i]["ts"] for i in s), "flow order")
    k = [e for e in xs if e["name"] == "axpy"]
    check(k and k[0]["args"].get("context", "").endswith("<gpu kernel> > axpy"), "kernel context %s" % k[:1])
    # A trace damaged in the middle keeps what came before; garbage is an error.
    name = os.path.join(d, "app-0-100.gttrace")
    data = bytearray(open(name, "rb").read())
    data[-30] ^= 0xFF
    open(name, "wb").write(data)
    code, out, err = run(["report", d, "--format", "chrome"])
    check(code == 0 and "damaged chunk" in err and json.loads(out), "damaged trace: %d %r" % (code, err))
    open(name, "wb").write(b"not a trace at all")
    code, out, err = run(["report", d, "--format", "chrome"])
    check(code == 1 and "not a gputool trace" in err, "garbage trace: %d %r" % (code, err))
    for r in range(len(profiles)):
        os.unlink(os.path.join(d, "app-%d-%d.gttrace" % (r, 100 + r)))


def check_errors(tmp, d):
    bad = os.path.join(tmp, "bad")
    shutil.copytree(d, bad)
    data = open(os.path.join(d, "app-0-100.gtprof"), "rb").read()
    open(os.path.join(bad, "app-7-1.gtprof"), "wb").write(data[:len(data) // 2])
    open(os.path.join(bad, "app-8-1.gtprof"), "wb").write(b"hello, world\n")
    flipped = bytearray(data)
    flipped[40] ^= 0x55
    open(os.path.join(bad, "app-9-1.gtprof"), "wb").write(flipped)
    code, out, err = run(["report", bad])
    check(code == 1 and "processes    3" in out and "3 profiles could not be read" in out, "bad profiles: %d\n%s" % (code, out))
    for what in ("truncated", "bad magic", "checksum mismatch"):
        check(what in err and "left out" in err, "no %r in %r" % (what, err))
    code, out, err = run(["report", bad, "--format", "json"])
    check(code == 1 and json.loads(out)["run"]["failed"] == 3, "json with bad profiles")
    only_bad = os.path.join(tmp, "only-bad")
    os.mkdir(only_bad)
    open(os.path.join(only_bad, "x.gtprof"), "wb").write(data[:100])
    code, out, err = run(["report", only_bad])
    check(code == 1 and not out and "no profile in" in err, "only bad: %d %r" % (code, err))
    empty = os.path.join(tmp, "empty")
    os.mkdir(empty)
    code, out, err = run(["report", empty])
    check(code == 1 and "no *.gtprof files" in err, "empty dir: %r" % err)
    code, out, err = run(["report", os.path.join(tmp, "missing")])
    check(code == 1 and "cannot open" in err, "missing: %r" % err)
    code, out, err = run(["report", d, "-o", os.path.join(tmp, "no", "such", "file")])
    check(code == 1 and "cannot write" in err, "unwritable output: %r" % err)
    for args, what in ((["--view", "sideways"], "unknown view"), (["--format", "xml"], "unknown format"),
                       (["--metric", "NOPE"], "no metric NOPE"), (["--top", "0"], "--top"),
                       (["--metric"], "--metric needs")):
        code, out, err = run(["report", d] + args)
        check(code == 2 and what in err, "%s: %d %r" % (args, code, err))
    # A profile alone is reported as a run of one process, in every format.
    one = os.path.join(d, "app-1-101.gtprof")
    code, out, err = run(["report", one, "--format", "json"])
    doc = json.loads(out) if code == 0 else {}
    check(doc.get("format") == "gputool-report" and doc["run"]["processes"] == 1
          and doc["processes"][0]["meta"].get("pid") == "101", "one profile as JSON")
    code, out, err = run(["report", one, "--view", "flat"])
    check(code == 0 and "Flat view" in out and "processes    1 (rank 1, pid 101)" in out, "one profile, flat:\n" + out)


def check_mpi(d, single):
    for n in (2, 3, 4):
        p = subprocess.run([MPIRUN] + MPIFLAGS + ["-np", str(n), GPUTOOL, "report", d, "--format", "json"],
                           capture_output=True, timeout=300)
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            doc = None
        check(p.returncode == 0 and doc == single, "mpirun -np %d gputool report differs (exit %d): %s" %
              (n, p.returncode, p.stderr.decode()[-2000:]))
    p = subprocess.run([MPIRUN] + MPIFLAGS + ["-np", "2", GPUTOOL, "report", d], capture_output=True, timeout=300)
    code, out, _ = run(["report", d])
    check(p.returncode == 0 and p.stdout.decode() == out, "mpirun text report differs")


def main():
    tmp = tempfile.mkdtemp(prefix="gt-report-")
    d = os.path.join(tmp, "run")
    os.mkdir(d)
    profiles = [build(r) for r in range(3)]
    for r, p in enumerate(profiles):
        p.write(os.path.join(d, "app-%d-%d.gtprof" % (r, 100 + r)))
    code, out, err = run(["report", d, "--format", "json"])
    if not check(code == 0, "report --format json: %d %s" % (code, err)):
        sys.exit(1)
    doc = json.loads(out)
    try:
        gtfiles.validate(doc, json.load(open(SCHEMA)))
    except gtfiles.SchemaError as e:
        fail("JSON does not follow docs/report.schema.json: %s" % e)
    totals = check_json(doc, profiles)
    check_formats(d, profiles, doc, totals)
    check_chrome(d, profiles)
    check_errors(tmp, d)
    if MPIRUN:
        check_mpi(d, doc)
    else:
        print("(no mpirun or gputool-mpi: the MPI merge is not checked)")
    if failures:
        print("check_report: %d failures (files in %s)" % (len(failures), tmp))
        sys.exit(1)
    shutil.rmtree(tmp)
    print("check_report: ok")


if __name__ == "__main__":
    main()
