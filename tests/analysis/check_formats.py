#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The formats other tools read, from a two-process run of known values:
folded stacks (with their unit), speedscope, Hatchet's literal form and
pprof's profile.proto. Each is checked against the values the run holds,
then loaded by its own tool: speedscope in headless Chromium (the npm
package's page, as its command line opens it), `go tool pprof -raw`, and
Hatchet's GraphFrame.from_literal where Hatchet is installed.

Usage: check_formats.py GPUTOOL [TOOLS_DIR]

TOOLS_DIR (default /opt/gputool-test) holds node_modules/speedscope
(scripts/install-deps.sh --test puts it there). A tool that is missing is
said and skipped, unless GT_REQUIRE_FORMAT_TOOLS=1 (scripts/test.sh sets it
for speedscope and go), where a missing tool fails the test. Hatchet is
looked for in GT_HATCHET_PATH, /opt/hatchet, then Python's own path."""
import base64
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gtfiles  # noqa: E402
from runenv import check, failures  # noqa: E402

GPUTOOL = sys.argv[1]
TOOLS = sys.argv[2] if len(sys.argv) > 2 else "/opt/gputool-test"
REQUIRE = os.environ.get("GT_REQUIRE_FORMAT_TOOLS") == "1"
TEMPLATE = "ns::f<int, 2>(double; \"q\")"  # ';', '<>', quotes: every format's escaping
DEPTH = 60


def missing(tool):
    if REQUIRE:
        check(False, "%s is not installed (scripts/install-deps.sh --test installs it)" % tool)
    else:
        print("skip %s: not installed" % tool)


def make_run(d):
    """Two ranks. CPU time: work from main:5 and main:9 in 3:1, a
    template-named function, a recursion DEPTH deep; a kernel and a copy."""
    for r in range(2):
        p = gtfiles.Profile({"rank": str(r), "pid": str(20 + r), "exe": "/bin/app"}, threads=2)
        m5 = p.frame(0, "main", line=5)
        m9 = p.frame(0, "main", line=9)
        p.value(p.frame(m5, "work", line=20), 0, "CPUTIME", 3000000 * (r + 1))
        p.value(p.frame(m9, "work", line=20), 1, "CPUTIME", 1000000 * (r + 1))
        p.value(p.frame(m5, TEMPLATE, file="t.cc", line=7), 0, "CPUTIME", 500000)
        rec = m9
        for _ in range(DEPTH):
            rec = p.frame(rec, "rec", line=30)
        p.value(rec, 1, "CPUTIME", 250000)
        solve = p.frame(m9, "solve", line=12)
        k = p.node(p.ph(solve, "<gpu kernel>"), gtfiles.NAME, "axpy")
        p.value(k, 0, "GKER", 2000000)
        p.value(k, 0, "GKER_COUNT", 10)
        c = p.node(p.ph(solve, "<gpu copy>"), gtfiles.NAME, "upload")
        p.value(c, 0, "GXCOPY_H2D_BYTES", 4 << 20)
        p.value(c, 0, "GXCOPY_H2D", 300000)
        p.write(os.path.join(d, "app-%d-%d.gtprof" % (r, 20 + r)))


# What the run holds, per metric, summed over both ranks.
TOTALS = {
    "CPUTIME": 3000000 * 3 + 1000000 * 3 + 500000 * 2 + 250000 * 2,
    "GKER": 4000000, "GKER_COUNT": 20, "GXCOPY_H2D_BYTES": 8 << 20, "GXCOPY_H2D": 600000,
}


def report(d, fmt, *extra):
    out = os.path.join(d, "..", "out." + fmt)
    p = subprocess.run([GPUTOOL, "report", d, "--format", fmt, "-o", out] + list(extra),
                       capture_output=True, text=True)
    check(p.returncode == 0, "gputool report --format %s: exit %d %s" % (fmt, p.returncode, p.stderr))
    return out


def check_folded(d):
    out = report(d, "folded", "--metric", "GXCOPY_H2D_BYTES")
    lines = open(out).read().splitlines()
    check(lines[0] == "# gputool folded stacks: metric GXCOPY_H2D_BYTES, values in bytes",
          "folded: the first line names the metric and unit: %r" % lines[0])
    check(sum(int(l.rsplit(" ", 1)[1]) for l in lines[1:]) == TOTALS["GXCOPY_H2D_BYTES"], "folded: bytes sum")
    return report(d, "folded")


def check_speedscope(d):
    out = report(d, "speedscope")
    doc = json.load(open(out))
    frames = doc["shared"]["frames"]
    profiles = {p["name"]: p for p in doc["profiles"]}
    check(doc["$schema"] == "https://www.speedscope.app/file-format-schema.json", "speedscope: $schema")
    check(set(profiles) == set(TOTALS), "speedscope: one profile per metric: %s" % sorted(profiles))
    check(doc["profiles"][doc["activeProfileIndex"]]["name"] == "CPUTIME", "speedscope: CPUTIME shown first")
    units = {"CPUTIME": "nanoseconds", "GXCOPY_H2D_BYTES": "bytes", "GKER_COUNT": "none"}
    for name, p in profiles.items():
        check(p["type"] == "sampled" and len(p["samples"]) == len(p["weights"]), "speedscope %s: sampled" % name)
        check(sum(p["weights"]) == TOTALS[name] == p["endValue"], "speedscope %s: weights add up" % name)
        if name in units:
            check(p["unit"] == units[name], "speedscope %s: unit %s" % (name, p["unit"]))
    names = [f["name"] for f in frames]
    check(names.count("main") == 1 and names.count("work") == 1 and names.count("rec") == 1,
          "speedscope: a function's contexts share one frame: %s" % names)
    check(TEMPLATE in names and "<gpu kernel>" in names and "axpy" in names, "speedscope: names as written")
    cpu = profiles["CPUTIME"]
    work = names.index("work")
    by_site = {}
    for stack, w in zip(cpu["samples"], cpu["weights"]):
        if stack[-1] == work:
            by_site[len(stack)] = by_site.get(len(stack), 0) + w
    check(sum(by_site.values()) == 12000000, "speedscope: work's weight %s" % by_site)
    deep = [s for s in cpu["samples"] if s[-1] == names.index("rec")]
    check(len(deep) == 1 and len(deep[0]) == DEPTH + 1, "speedscope: the recursion's stack is %d deep" % (DEPTH + 1))
    if frames and "file" in frames[names.index("axpy")]:
        check(False, "speedscope: a kernel name has no source file")
    gk = profiles["GKER"]
    check(gk["samples"] == [[names.index("main"), names.index("solve"), names.index("<gpu kernel>"),
                             names.index("axpy")]], "speedscope: the kernel's stack %s" % gk["samples"])
    return out


def speedscope_loads(tmp, path, name, marker):
    """Opens path in speedscope's page in Chromium, as speedscope's command
    line does (a script that hands the file over, named in the URL)."""
    page = os.path.join(TOOLS, "node_modules", "speedscope", "dist", "release", "index.html")
    chrome = shutil.which("chromium") or shutil.which("chromium-browser")
    if not os.path.exists(page) or not chrome:
        missing("speedscope (npm) and Chromium" if not chrome else "speedscope (npm, in %s)" % TOOLS)
        return
    js = os.path.join(tmp, "load-%s.js" % os.path.basename(path))
    with open(js, "w") as f:
        f.write("speedscope.loadFileFromBase64(%s, %s)" % (
            json.dumps(name), json.dumps(base64.b64encode(open(path, "rb").read()).decode())))
    r = subprocess.run([chrome, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                        "--disable-component-update", "--no-first-run", "--disable-dev-shm-usage",
                        "--allow-file-access-from-files", "--user-data-dir=" + os.path.join(tmp, "p-" + name),
                        "--enable-logging=stderr", "--v=0", "--virtual-time-budget=10000", "--dump-dom",
                        "file://%s#localProfilePath=%s" % (page, js)], capture_output=True, text=True, timeout=180)
    text = re.sub(r"<[^>]+>", " ", re.sub(r"<(script|style).*?</\1>", "", r.stdout, flags=re.S))
    console = [l for l in r.stderr.splitlines() if "CONSOLE" in l]
    errors = [l for l in r.stderr.splitlines() if "Uncaught" in l or "rror" in l and "CONSOLE" in l]
    ok = check(any(marker in l for l in console), "speedscope did not import %s as expected (%s): %s" %
               (name, marker, console[-3:]))
    ok &= check(not errors, "speedscope %s: errors %s" % (name, errors[:3]))
    return ok, text


def check_speedscope_loads(tmp, ss, folded):
    got = speedscope_loads(tmp, ss, "run.speedscope.json", "Importing as speedscope json file")
    if got and got[0]:
        n = len(TOTALS)
        check(re.search(r"CPUTIME\s+\(1/%d\)" % n, got[1]) is not None,
              "speedscope: the page does not show CPUTIME (1/%d)" % n)
        check(all(m in got[1] for m in TOTALS), "speedscope: the page lists every metric's profile")
        print("ok   speedscope loads the speedscope file: %d profiles" % n)
    got = speedscope_loads(tmp, folded, "run.folded", "Importing as collapsed stack format")
    if got and got[0]:
        print("ok   speedscope loads the folded file")


def tree_checks(node, totals, path="<program>"):
    """Hatchet's literal tree: every node has every metric; inclusive =
    exclusive + the children's inclusive."""
    kids = node.get("children", [])
    for m in TOTALS:
        inc = node["metrics"][m + " (inc)"]
        if node["metrics"][m] + sum(k["metrics"][m + " (inc)"] for k in kids) != inc:
            check(False, "hatchet: %s at %s: inclusive is not exclusive + children" % (m, path))
            return 0
        totals[m] = totals.get(m, 0) + node["metrics"][m]
    depth = 0
    for k in kids:
        depth = max(depth, tree_checks(k, totals, path + "/" + k["frame"]["name"]))
    return depth + 1


def find(node, path):
    for name in path:
        node = next((k for k in node.get("children", []) if k["frame"]["name"] == name and
                     (name != "main" or k["frame"].get("line") == 9)), None)
        if node is None:
            return {"frame": None, "metrics": {}}
    return node


def check_hatchet(d):
    out = report(d, "hatchet")
    doc = json.load(open(out))
    check(isinstance(doc, list) and len(doc) == 1 and doc[0]["frame"] == {"name": "<program>", "type": "root"},
          "hatchet: one tree from <program>")
    totals = {}
    depth = tree_checks(doc[0], totals)
    check(totals == TOTALS, "hatchet: exclusive sums %s" % totals)
    check(all(doc[0]["metrics"][m + " (inc)"] == v for m, v in TOTALS.items()), "hatchet: the root's inclusive")
    check(depth == DEPTH + 2, "hatchet: depth %d" % depth)
    kernel = find(doc[0], ["main", "solve", "<gpu kernel>", "axpy"])
    check(kernel["frame"] == {"name": "axpy", "type": "name"} and kernel["metrics"].get("GKER") == 4000000,
          "hatchet: the kernel under <gpu kernel>: %s" % kernel["frame"])
    return out


HATCHET_LOAD = r"""
import json, sys
sys.setrecursionlimit(10000)
import hatchet as ht
gf = ht.GraphFrame.from_literal(json.load(open(sys.argv[1])))
df = gf.dataframe
out = {m: int(df[m].sum()) for m in gf.exc_metrics}
root = gf.graph.roots[0]
out["inc_root"] = {m: int(df.loc[root, m]) for m in gf.inc_metrics}
out["work"] = int(df[df["name"] == "work"]["CPUTIME"].sum())
out["tree"] = "axpy" in gf.tree(metric_column="GKER (inc)")
print(json.dumps(out))
"""


def hatchet_loads(path):
    env = dict(os.environ)
    paths = [p for p in (os.environ.get("GT_HATCHET_PATH"), "/opt/hatchet") if p and os.path.isdir(p)]
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")])
    for py in ("/usr/bin/python3", sys.executable):
        if subprocess.run([py, "-c", "import hatchet"], env=env, capture_output=True).returncode == 0:
            break
    else:
        print("skip Hatchet: not installed (no hatchet module for %s)" % ", ".join(("/usr/bin/python3", sys.executable)))
        return
    r = subprocess.run([py, "-c", HATCHET_LOAD, path], env=env, capture_output=True, text=True)
    if not check(r.returncode == 0, "Hatchet's from_literal: %s" % r.stderr[-800:]):
        return
    got = json.loads(r.stdout.strip().splitlines()[-1])
    check(all(got[m] == v for m, v in TOTALS.items()), "Hatchet: dataframe sums %s" % got)
    check(got["inc_root"] == {m + " (inc)": v for m, v in TOTALS.items()}, "Hatchet: the root's inclusive")
    check(got["work"] == 12000000 and got["tree"], "Hatchet: work's CPU time, the tree")
    print("ok   Hatchet's GraphFrame.from_literal loads it: %d metrics" % len(TOTALS))


def pb_fields(b):
    """(field, value) of a protobuf message: varints and bytes."""
    i, out = 0, []
    while i < len(b):
        k, i = varint(b, i)
        if k & 7 == 0:
            v, i = varint(b, i)
        elif k & 7 == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % (k & 7))
        out.append((k >> 3, v))
    return out


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def packed(b):
    i, out = 0, []
    while i < len(b):
        v, i = varint(b, i)
        out.append(v)
    return out


def check_pprof(d):
    out = report(d, "pprof")
    raw = open(out, "rb").read()
    check(raw[:2] == b"\x1f\x8b", "pprof: gzipped")
    prof = pb_fields(gzip.decompress(raw))
    strings = [v.decode() for f, v in prof if f == 6]
    check(strings[0] == "", "pprof: string_table[0] is empty")
    types = [{f: v for f, v in pb_fields(m)} for f, m in prof if f == 1]
    names = [strings[t[1]] for t in types]
    check(set(names) == set(TOTALS), "pprof: sample types %s" % names)
    check(strings[types[names.index("CPUTIME")][2]] == "nanoseconds" and
          strings[types[names.index("GXCOPY_H2D_BYTES")][2]] == "bytes", "pprof: units")
    sums = [0] * len(names)
    for f, m in prof:
        if f == 2:
            for k, v in enumerate(packed(dict(pb_fields(m))[2])):
                sums[k] += v
    check(dict(zip(names, sums)) == TOTALS, "pprof: values add up: %s" % dict(zip(names, sums)))
    dflt = [v for f, v in prof if f == 14]
    check(dflt and strings[dflt[0]] == "CPUTIME", "pprof: CPUTIME is the default sample type")
    funcs = [dict(pb_fields(m)) for f, m in prof if f == 5]
    fnames = [strings[x[2]] for x in funcs]
    check(fnames.count("main") == 1 and TEMPLATE in fnames and "<gpu kernel>" in fnames, "pprof: functions %s" % fnames)
    return out


def pprof_loads(path):
    go = shutil.which("go")
    if not go:
        missing("go (Debian's golang-go, for go tool pprof)")
        return
    env = dict(os.environ, HOME=os.environ.get("HOME", "/tmp"), PPROF_TMPDIR=tempfile.gettempdir())
    r = subprocess.run([go, "tool", "pprof", "-raw", path], capture_output=True, text=True, env=env, timeout=300)
    if not check(r.returncode == 0, "go tool pprof -raw: %s" % r.stderr[-500:]):
        return
    lines = r.stdout.splitlines()
    head = next(i for i, l in enumerate(lines) if l.startswith("Samples:")) + 1
    types = [t.split("/")[0] for t in lines[head].replace("[dflt]", "").split()]
    sums = [0] * len(types)
    for l in lines[head + 1:]:
        if not re.match(r"^\s+\d", l):
            break
        for k, v in enumerate(l.split(":")[0].split()):
            sums[k] += int(v)
    check(dict(zip(types, sums)) == TOTALS, "go tool pprof -raw: totals %s" % dict(zip(types, sums)))
    r = subprocess.run([go, "tool", "pprof", "-top", "-sample_index=GKER", "-unit=ns", path],
                       capture_output=True, text=True, env=env, timeout=300)
    top = [l.split()[-1] for l in r.stdout.splitlines() if re.match(r"^\s+\d+ns\s", l)]
    check(r.returncode == 0 and top[:1] == ["axpy"], "go tool pprof -top GKER: %s" % top)
    r = subprocess.run([go, "tool", "pprof", "-top", "-unit=ns", path], capture_output=True, text=True, env=env,
                       timeout=300)
    check(TEMPLATE in r.stdout and "<gpu kernel>" not in r.stdout.split("flat%")[0],
          "go tool pprof -top: names kept as written")
    print("ok   go tool pprof reads it: %s" % ", ".join(types))


def main():
    tmp = tempfile.mkdtemp(prefix="gt-formats-")
    d = os.path.join(tmp, "run")
    os.mkdir(d)
    make_run(d)
    folded = check_folded(d)
    ss = check_speedscope(d)
    check_speedscope_loads(tmp, ss, folded)
    hatchet_loads(check_hatchet(d))
    pprof_loads(check_pprof(d))
    p = subprocess.run([GPUTOOL, "report", d, "--format", "speedscope", "--metric", "GKER"],
                       capture_output=True, text=True)
    doc = json.loads(p.stdout)
    check(doc["profiles"][doc["activeProfileIndex"]]["name"] == "GKER", "speedscope --metric GKER shows GKER first")
    if failures:
        print("check_formats: %d failures (files in %s)" % (len(failures), tmp))
        sys.exit(1)
    shutil.rmtree(tmp)
    print("check_formats: ok")


main()
