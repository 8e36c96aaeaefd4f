#!/usr/bin/env python3
"""Checks the JSON form (docs/REPORT.md) of one profile: the sample profile
built by test_profile, written as a file and reported by
`gputool report FILE --format json`.

Usage: check_json.py TEST_PROFILE_BINARY GPUTOOL

Parses the output with the standard json module and checks the fields and
their order, the sums (inclusive = exclusive + the children's inclusive,
saturating at 2**64 - 1), the per-thread statistics, the process's meta
keys in the profile's order, exact 64-bit integers, escaping and a few
known values.
"""
import json
import os
import subprocess
import sys
import tempfile

U64_MAX = 2**64 - 1
MS = 1000000
TOP = ["format", "version", "source", "metric", "run", "metrics", "processes", "importance",
       "advice", "imbalance", "regions", "waits", "modules", "nodes"]
NODE_FIELDS = ["id", "parent", "kind", "name", "file", "line", "module", "offset", "label",
               "metrics", "importance"]


def fail(msg):
    print("check_json: " + msg, file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def main():
    tmp = tempfile.mkdtemp(prefix="gt-json-")
    prof = os.path.join(tmp, "app.gtprof")
    subprocess.run([sys.argv[1], "emit-binary", prof], check=True)
    out = subprocess.run([sys.argv[2], "report", prof, "--format", "json"], check=True,
                         stdout=subprocess.PIPE).stdout
    text = out.decode("utf-8")  # must be valid UTF-8
    raw = json.loads(text, object_pairs_hook=lambda kv: kv)
    # "advice_none" follows an empty "advice" list, and only then.
    check([k for k, _ in raw if k != "advice_none"] == TOP, "top-level fields: %r" % [k for k, _ in raw])
    doc = json.loads(text)
    check(("advice_none" in doc) == (not doc["advice"]) and
          ("advice_none" not in doc or [k for k, _ in raw].index("advice_none") ==
           [k for k, _ in raw].index("advice") + 1),
          "advice_none after an empty advice list: %r" % [k for k, _ in raw])
    check(doc["format"] == "gputool-report" and doc["version"] == 1, "format/version")
    check(doc["source"] == prof and doc["run"]["processes"] == 1 and doc["run"]["threads"] == 3,
          "source and run: %r %r" % (doc["source"], doc["run"]))

    proc = doc["processes"][0]
    check(proc["pid"] == 4242 and proc["rank"] == 0 and proc["host"] == "node1"
          and proc["exe"] == "/usr/bin/app" and proc["threads"] == 3
          and proc["wall_ns"] == 2000000000, "process: %r" % proc)
    meta = proc["meta"]
    check(list(meta)[:3] == ["exe", "cmdline", "pid"], "meta keeps the profile's order: %r" % list(meta))
    check(meta["wall_ns"] == "2000000000" and meta["dropped_samples"] == "3", "meta values")

    metrics = doc["metrics"]
    check(all(list(m) == ["name", "unit", "description", "class", "total"] for m in metrics),
          "metric fields")
    classes = {m["name"]: m["class"] for m in metrics}
    check(classes["CPUTIME"] == "cpu", "CPUTIME's class %r" % classes["CPUTIME"])
    for name, cls in (("GKER", "device"), ("GSYNC", "gpu_host"), ("GMEM", "gpu_host"),
                      ("OMP_WAIT", "host"), ("CPU_IDLE", "blame"), ("GXCOPY_H2D_BYTES", "bytes")):
        check(classes.get(name, cls) == cls, "%s's class %r" % (name, classes.get(name)))
    check(sorted(doc["modules"]) == ["/usr/bin/app", "/usr/lib/libomp.so"], "modules")

    nodes = doc["nodes"]
    for r in dict(raw)["nodes"]:
        check([k for k, _ in r] == NODE_FIELDS, "node fields: %r" % [k for k, _ in r])
    byid = {}
    for i, n in enumerate(nodes):
        check(n["id"] == i, "node ids are positions")
        check((n["parent"] is None) == (i == 0), "only the root has no parent")
        check(n["parent"] is None or n["parent"] < i, "parents come first")
        check(n["kind"] in ("root", "frame", "placeholder", "name"), "kind")
        byid[i] = n
        for m, c in n["metrics"].items():
            check(c["incl"]["sum"] != 0, "no zero inclusive")
            if "excl" in c:
                check(c["excl"]["sum"] != 0, "no zero exclusive")
                t = c["threads"]
                check(1 <= t["threads"] <= 3 and t["min"] <= t["max"] <= c["excl"]["sum"],
                      "node %d %s: thread statistics %r" % (i, m, t))

    def excl(n, m):
        return n["metrics"].get(m, {}).get("excl", {}).get("sum", 0)

    def incl(n, m):
        return n["metrics"].get(m, {}).get("incl", {}).get("sum", 0)

    # inclusive = exclusive + inclusive of the children
    expect = [{m: excl(n, m) for m in n["metrics"] if excl(n, m)} for n in nodes]
    for i in range(len(nodes) - 1, 0, -1):
        p = nodes[i]["parent"]
        for m, v in expect[i].items():
            expect[p][m] = min(expect[p].get(m, 0) + v, U64_MAX)
    for i, n in enumerate(nodes):
        got = {m: incl(n, m) for m in n["metrics"]}
        check(got == expect[i], "node %d inclusive %r != %r" % (i, got, expect[i]))

    def path(n):
        out = []
        while n["parent"] is not None:
            out.append(n["name"])
            n = byid[n["parent"]]
        return list(reversed(out))

    def find(p):
        hits = [n for n in nodes if path(n) == p]
        check(len(hits) == 1, "one node at %r, found %d" % (p, len(hits)))
        return hits[0]

    root = nodes[0]
    check(root["kind"] == "root" and root["name"] is None, "root")
    region = find(["main", "run_a", "<omp parallel>"])
    compute = find(["main", "run_a", "<omp parallel>", "compute"])
    check(compute["file"] == "/src/app.c" and compute["line"] == 12
          and doc["modules"][compute["module"]] == "/usr/bin/app"
          and compute["offset"] == 0x1200, "compute node: %r" % compute)
    t = compute["metrics"]["CPUTIME"]["threads"]
    check((t["threads"], t["min"], t["max"]) == (3, 300 * MS, 600 * MS),
          "per-thread statistics, with the repeated cell summed: %r" % t)
    check(excl(compute, "CPUTIME") == 1300 * MS, "compute exclusive")
    check(incl(region, "CPUTIME") == 1400 * MS, "region inclusive")
    check(incl(root, "CPUTIME") == 1540 * MS, "root inclusive")
    check(region["kind"] == "placeholder", "placeholder")
    anon = [n for n in nodes if n["kind"] == "frame" and n["name"] is None]
    check(len(anon) == 1 and doc["modules"][anon[0]["module"]] == "/usr/lib/libomp.so",
          "frame without a name")
    weird = [n for n in nodes if n["kind"] == "name"]
    check(len(weird) == 1 and weird[0]["name"] == 'kernel<"weird">\\\n\x01\ufffd\u00e9',
          "escaping: %r" % [n["name"] for n in weird])
    check(excl(weird[0], "OMP_EXPLICIT_TASKS") == U64_MAX, "uint64 printed exactly")
    check(incl(root, "OMP_EXPLICIT_TASKS") == U64_MAX, "saturated sum")
    # The text's OpenMP regions and waits: each row's values are its node's.
    regions, waits = doc["regions"], doc["waits"]
    check(regions["of"] == 3 and len(regions["rows"]) == 3 and regions["wall_ns"] == 2000000000,
          "regions: %r" % {k: v for k, v in regions.items() if k != "rows"})
    r0 = regions["rows"][0]
    check(r0["node"] == region["id"] and r0["kernel"] is None and r0["instances"] == 4
          and r0["time_ns"] == excl(region, "OMP_PAR_TIME") == 1500 * MS and r0["thread_instances"] == 12
          and r0["wait_ns"] == 1200 * MS and r0["cpu_ns"] == incl(region, "CPUTIME")
          and r0["bodies"] == [compute["id"]] and r0["where"] == "main (app.c:50) > run_a (app.c:30)",
          "first region row: %r" % r0)
    check([r["time_ns"] for r in regions["rows"]] == sorted((r["time_ns"] for r in regions["rows"]), reverse=True),
          "regions by time")
    check(waits["of"] == 2 and waits["total_ns"] == sum(excl(n, "OMP_WAIT") for n in nodes),
          "waits: %r" % {k: v for k, v in waits.items() if k != "rows"})
    for w in waits["rows"]:
        n = byid[w["node"]]
        check(w["wait_ns"] == excl(n, "OMP_WAIT") and w["count"] == excl(n, "OMP_WAIT_COUNT")
              and w["threads"] == n["metrics"]["OMP_WAIT"]["threads"]["threads"]
              and w["where"].startswith(n["name"] + " < "), "wait row %r" % w)
    print("check_json: %d nodes ok" % len(nodes))


if __name__ == "__main__":
    main()
