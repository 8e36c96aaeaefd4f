#!/usr/bin/env python3
"""Checks the JSON form of the sample profile built by test_profile.

Usage: check_json.py TEST_PROFILE_BINARY

Runs `TEST_PROFILE_BINARY emit-json`, parses the output with the standard
json module and checks the schema (field names and order), the sums
(exclusive = sum over threads, inclusive = exclusive + children's inclusive,
saturating at 2**64 - 1) and a few known values.
"""
import json
import subprocess
import sys

U64_MAX = 2**64 - 1
MS = 1000000
NODE_FIELDS = ["id", "parent", "kind", "name", "file", "line", "module",
               "offset", "exclusive", "inclusive", "threads"]


def fail(msg):
    print("check_json: " + msg, file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def main():
    out = subprocess.run([sys.argv[1], "emit-json"], check=True,
                         stdout=subprocess.PIPE).stdout
    text = out.decode("utf-8")  # must be valid UTF-8
    doc = json.loads(text, object_pairs_hook=lambda kv: kv)
    check([k for k, _ in doc] == ["format", "version", "meta", "metrics",
                                  "threads", "modules", "nodes"],
          "top-level fields: %r" % [k for k, _ in doc])
    doc = json.loads(text)
    check(doc["format"] == "gputool-profile" and doc["version"] == 1, "format/version")
    meta = doc["meta"]
    check(meta["exe"] == "/usr/bin/app" and meta["wall_ns"] == "2000000000", "meta")
    check(list(meta)[0] == "exe", "meta keeps its order")
    metrics = doc["metrics"]
    check(all(list(m) == ["name", "unit", "description", "class"] for m in metrics), "metric fields")
    check(metrics[0]["name"] == "CPUTIME" and metrics[0]["unit"] == "ns", "first metric")
    # Classes come from the profile: the ones this version gives the names.
    classes = {m["name"]: m["class"] for m in metrics}
    check(classes["CPUTIME"] == "cpu", "CPUTIME's class %r" % classes["CPUTIME"])
    for name, cls in (("GKER", "device"), ("GSYNC", "gpu_host"), ("GMEM", "gpu_host"),
                      ("OMP_WAIT", "host"), ("CPU_IDLE", "blame"), ("GXCOPY_H2D_BYTES", "bytes")):
        check(classes.get(name, cls) == cls, "%s's class %r" % (name, classes.get(name)))
    check(doc["threads"][1] == {"id": 1, "tid": 101, "kind": "worker"}, "threads")
    check(doc["modules"] == ["/usr/bin/app", "/usr/lib/libomp.so"], "modules")

    nodes = doc["nodes"]
    raw_nodes = dict(json.loads(text, object_pairs_hook=lambda kv: kv))["nodes"]
    for raw in raw_nodes:
        check([k for k, _ in raw] == NODE_FIELDS, "node fields: %r" % [k for k, _ in raw])
    thread_ids = {str(t["id"]) for t in doc["threads"]}
    for i, n in enumerate(nodes):
        check(n["id"] == i, "node ids are indices")
        check((n["parent"] is None) == (i == 0), "only the root has no parent")
        check(n["parent"] is None or n["parent"] < i, "parents come first")
        check(n["kind"] in ("root", "frame", "placeholder", "name"), "kind")
        for m, per_thread in n["threads"].items():
            check(set(per_thread) <= thread_ids, "thread keys are thread ids")
            check(n["exclusive"].get(m) == min(sum(per_thread.values()), U64_MAX),
                  "node %d %s: exclusive is the sum over threads" % (i, m))
        check(set(n["exclusive"]) == set(n["threads"]), "same metrics in exclusive and threads")
        check(all(v != 0 for v in n["exclusive"].values()), "no zero exclusive")
        check(all(v != 0 for v in n["inclusive"].values()), "no zero inclusive")

    # inclusive = exclusive + inclusive of the children
    expect = [dict(n["exclusive"]) for n in nodes]
    for i in range(len(nodes) - 1, 0, -1):
        p = nodes[i]["parent"]
        for m, v in expect[i].items():
            expect[p][m] = min(expect[p].get(m, 0) + v, U64_MAX)
    for i, n in enumerate(nodes):
        check(n["inclusive"] == expect[i], "node %d inclusive %r != %r" % (i, n["inclusive"], expect[i]))

    # Known values of the sample.
    check(nodes[0]["kind"] == "root" and nodes[0]["name"] is None, "root")
    compute = nodes[4]
    check(compute["name"] == "compute" and compute["file"] == "/src/app.c"
          and compute["line"] == 12 and compute["module"] == 0
          and compute["offset"] == 0x1200, "compute node")
    check(compute["threads"]["CPUTIME"] == {"0": 600 * MS, "1": 400 * MS, "2": 300 * MS},
          "per-thread values, with the repeated cell summed")
    check(compute["exclusive"]["CPUTIME"] == 1300 * MS, "compute exclusive")
    check(nodes[3]["inclusive"]["CPUTIME"] == 1400 * MS, "region inclusive")
    check(nodes[0]["inclusive"]["CPUTIME"] == 1540 * MS, "root inclusive")
    check(nodes[3]["kind"] == "placeholder" and nodes[3]["name"] == "<omp parallel>", "placeholder")
    check(nodes[11]["name"] is None and nodes[11]["module"] == 1, "frame without a name")
    weird = nodes[12]
    check(weird["kind"] == "name", "name node")
    check(weird["name"] == 'kernel<"weird">\\\n\x01\ufffd\u00e9',
          "escaping: %r" % weird["name"])
    check(weird["exclusive"]["OMP_EXPLICIT_TASKS"] == U64_MAX, "uint64 printed exactly")
    check(nodes[0]["inclusive"]["OMP_EXPLICIT_TASKS"] == U64_MAX, "saturated sum")
    print("check_json: %d nodes ok" % len(nodes))


if __name__ == "__main__":
    main()
