# SPDX-License-Identifier: MIT
"""Helpers for end-to-end tests: run a program with and without the tool,
read each profile through `gputool report FILE --format json` (the JSON
form of docs/REPORT.md, one process), walk its tree."""
import json
import os
import re
import subprocess
import sys
import tempfile


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def close(a, b, rel):
    return abs(a - b) <= rel * max(abs(a), abs(b))


def own_times(err, prefix):
    """What a sample measured itself (SAMPLE_TIMES=1), from its line on
    stderr "PREFIX a key 1 key 2 b key 3": {"a": {"key": 1, ...}, "b": ...}."""
    lines = [l for l in err.splitlines() if l.startswith(prefix)]
    check(len(lines) == 1, "expected one %r line on stderr, got %r" % (prefix, err))
    out, who, words = {}, None, lines[0][len(prefix):].split()
    i = 0
    while i < len(words):
        if i + 1 < len(words) and words[i + 1].isdigit():
            out.setdefault(who, {})[words[i]] = int(words[i + 1])
            i += 2
        else:
            who = words[i]
            i += 1
    return out


# Tool and program read one clock (CLOCK_MONOTONIC), the tool possibly
# through the calibrated time-stamp counter: bounds are exact up to this.
CLOCK_SLACK_REL, CLOCK_SLACK_NS = 0.01, 1000000


def marked_line(src, tag):
    """The one line of source file @src marked "// TAG", as "file.cu:N"."""
    got = [i + 1 for i, line in enumerate(open(src)) if re.search(r"// %s\b" % tag, line)]
    check(len(got) == 1, "one line marked %s in %s: %s" % (tag, src, got))
    return "%s:%d" % (os.path.basename(src), got[0])


def pair_speedups(path):
    """The speedups a sample's pairs printed ("pair NAME ... speedup X"), by name."""
    return {m.group(1): float(m.group(2)) for m in
            re.finditer(r"^pair (\w+) .* speedup ([\d.]+)", open(path).read(), re.M)}


def bounded(value, lo, hi, what):
    """lo <= value <= hi, up to the clocks' slack; lo or hi may be None."""
    if lo is not None:
        check(value >= lo * (1 - CLOCK_SLACK_REL) - CLOCK_SLACK_NS,
              "%s = %.3f ms, below its bound %.3f ms" % (what, value / 1e6, lo / 1e6))
    if hi is not None:
        check(value <= hi * (1 + CLOCK_SLACK_REL) + CLOCK_SLACK_NS,
              "%s = %.3f ms, above its bound %.3f ms" % (what, value / 1e6, hi / 1e6))


def run(cmd, env=None, timeout=300, unset=()):
    e = dict(os.environ)
    for k in list(e):
        if k.startswith("GPUTOOL_") or k == "OMP_TOOL_LIBRARIES" or k in unset:
            del e[k]
    e.update(env or {})
    p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def inclusive(node):
    """{metric: inclusive sum over processes and threads} of a node of the JSON form."""
    return {m: c["incl"]["sum"] for m, c in node.get("metrics", {}).items()}


def exclusive(node):
    """{metric: exclusive sum} of a node; metrics measured only below it are left out."""
    return {m: c["excl"]["sum"] for m, c in node.get("metrics", {}).items() if "excl" in c}


class Profile:
    def __init__(self, doc):
        self.doc = doc
        self.nodes = {n["id"]: n for n in doc["nodes"]}
        self.children = {}
        for n in doc["nodes"]:
            self.children.setdefault(n.get("parent"), []).append(n)

    def path(self, node):
        out = []
        while node is not None and node.get("parent") is not None:
            out.append(node)
            node = self.nodes.get(node["parent"])
        return list(reversed(out))

    def names(self, node):
        return [n.get("name") or "?" for n in self.path(node)]

    def descendants(self, node):
        """Every node under @node (GPU lines sit under loops and GPU functions)."""
        out, todo = [], list(self.children.get(node["id"], []))
        while todo:
            n = todo.pop()
            out.append(n)
            todo.extend(self.children.get(n["id"], []))
        return out

    def find(self, name):
        return [n for n in self.doc["nodes"] if n.get("name") == name]

    def excl(self, node, metric):
        return node.get("metrics", {}).get(metric, {}).get("excl", {}).get("sum", 0)

    def incl(self, node, metric):
        return node.get("metrics", {}).get(metric, {}).get("incl", {}).get("sum", 0)

    def total(self, metric):
        """metric summed over the whole tree."""
        return self.incl(self.nodes[0], metric)

    def process(self):
        procs = self.doc["processes"]
        check(len(procs) == 1, "expected one process, found %d" % len(procs))
        return procs[0]

    def meta(self, key):
        return self.process()["meta"].get(key)

    def sample_weight(self):
        """The CPU time one sample stands for, at least: its period, or the
        profile's mean weight where that is more (the kernel fires CPU-time
        timers at its ticks, so on a loaded machine a sample carries
        several periods)."""
        hz = int(self.meta("sample_hz") or 0)
        period = 1e9 / hz if hz else 0
        return max(period, self.total("CPUTIME") / max(1, self.total("SAMPLES")))

    def threads(self):
        return self.process()["threads"]

    def per_thread(self, node, metric):
        """(threads, min, max, sum) of node's exclusive metric over the threads that measured it."""
        c = node.get("metrics", {}).get(metric, {})
        t = c.get("threads", {})
        return (t.get("threads", 0), t.get("min", 0), t.get("max", 0), c.get("excl", {}).get("sum", 0))


def profiles(gputool, outdir):
    files = sorted(f for f in os.listdir(outdir) if f.endswith(".gtprof"))
    out = []
    for f in files:
        code, js, err = run([gputool, "report", os.path.join(outdir, f), "--format", "json"])
        check(code == 0, "gputool report failed on %s: %s" % (f, err))
        out.append(Profile(json.loads(js)))
    return out


def one_profile(gputool, outdir):
    ps = profiles(gputool, outdir)
    check(len(ps) == 1, "expected one profile in %s, found %d" % (outdir, len(ps)))
    return ps[0]


def no_runtime_frames(p, prefixes=("libomp", "libgputool")):
    """No frame of a runtime (libomp, libomptarget...) or of the tool anywhere in the tree."""
    mods = p.doc.get("modules", [])
    for n in p.doc["nodes"]:
        if n.get("kind") not in ("frame", "inline", "tail") or n.get("module") is None:
            continue
        m = os.path.basename(mods[n["module"]])
        check(not m.startswith(tuple(prefixes)),
              "runtime frame %s (%s) at %s" % (n.get("name"), m, "/".join(p.names(n))))


def run_under_tool(lib, exe, args=(), env=None, outdir=None):
    """Runs exe bare and under the tool; checks stdout and exit code are the
    same; returns (outdir, stderr of the tool run)."""
    env = dict(env or {})
    code0, out0, _ = run([exe, *args], env=env)
    outdir = outdir or tempfile.mkdtemp(prefix="gputool-e2e-")
    env_tool = dict(env, OMP_TOOL_LIBRARIES=lib, GPUTOOL_OUTPUT=outdir)
    code1, out1, err1 = run([exe, *args], env=env_tool)
    check(code0 == code1, "exit code changed: %d vs %d" % (code0, code1))
    check(out0 == out1, "stdout changed:\n%s\nvs\n%s" % (out0, out1))
    return outdir, err1


def run_gputool(gputool, exe, args=(), env=None, outdir=None, unset=("LD_LIBRARY_PATH",)):
    """As users run it: `gputool run -o OUTDIR -- exe args`, by default with
    no LD_LIBRARY_PATH but what env sets. Runs exe bare too; checks stdout and
    exit code are the same; returns (outdir, stderr of the tool run)."""
    env = dict(env or {})
    code0, out0, _ = run([exe, *args], env=env, unset=unset)
    outdir = outdir or tempfile.mkdtemp(prefix="gputool-e2e-")
    code1, out1, err1 = run([gputool, "run", "-o", outdir, "--", exe, *args], env=env, unset=unset)
    check(code0 == code1, "exit code changed: %d vs %d" % (code0, code1))
    check(out0 == out1, "stdout changed:\n%s\nvs\n%s" % (out0, out1))
    return outdir, err1


def main(tests):
    failed = 0
    for name, fn in tests:
        try:
            fn()
            print("ok   " + name)
        except Fail as e:
            failed += 1
            print("FAIL %s: %s" % (name, e))
    print("%d of %d passed" % (len(tests) - failed, len(tests)))
    sys.exit(1 if failed else 0)
