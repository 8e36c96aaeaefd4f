# SPDX-License-Identifier: MIT
"""Attribution in optimized programs, end to end, against what the sources
say: C++ names demangled (the symbol kept as linkage_name), parallel regions
in inlined functions under the inlined call at its line, a frame removed by
a tail call rebuilt from the call-site debug information, and the CPU time
of a library closed before exit named from the library it was in.
Usage: test_attrib.py BUILD_DIR"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
import gtrun  # noqa: E402
from gtrun import bounded, check, main, own_times, run_under_tool  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
LIB = os.path.join(BUILD, "libgputool.so")
GPUTOOL = os.path.join(BUILD, "gputool")
BIN = os.path.join(BUILD, "tests", "attrib")
SRC = os.path.dirname(os.path.abspath(__file__))
ENV = {"OMP_NUM_THREADS": "2"}
# attrib.cpp is built without the sanitizers of a sanitizer build: their
# runtime comes preloaded. dlclosed is built with them (its own runtime).
CXX_ENV = dict(ENV)
if os.environ.get("GT_TARGET_PRELOAD"):
    CXX_ENV["LD_PRELOAD"] = os.environ["GT_TARGET_PRELOAD"]
ITERS = 10  # attrib.cpp


def lines_of(src):
    """{"STEP": 19, ...} from the LINE_* markers of a source file."""
    out = {}
    with open(os.path.join(SRC, src)) as f:
        for i, line in enumerate(f, 1):
            m = re.search(r"LINE_([A-Z_]+)", line)
            if m:
                out[m.group(1)] = i
    return out


def frame_path(p, node):
    """(kind, name, line) of every node from main down to node."""
    return [(n.get("kind"), n.get("name"), n.get("line")) for n in p.path(node)]


def regions(p):
    return [n for n in p.find("<omp parallel>")]


def region_with(p, tail):
    """The one <omp parallel> whose path ends with the frames in tail."""
    found = [r for r in regions(p) if frame_path(p, r)[-1 - len(tail):-1] == tail]
    check(len(found) == 1, "expected one region under %s, found %d; regions: %s"
          % (tail, len(found), [frame_path(p, r) for r in regions(p)]))
    return found[0]


_cxx = {}


def cxx_run():
    """attrib.cpp under the tool, once: (profile, text report, lines); the
    report at exit reads C++ parameter lists as (…)."""
    if not _cxx:
        outdir, _ = run_under_tool(LIB, os.path.join(BIN, "attrib"), env=CXX_ENV)
        txt = [f for f in os.listdir(outdir) if f.endswith(".txt")]
        check(len(txt) == 1, "reports: %s" % txt)
        with open(os.path.join(outdir, txt[0])) as f:
            _cxx["report"] = f.read()
        _cxx["p"] = gtrun.one_profile(GPUTOOL, outdir)
        code, out, err = gtrun.run([GPUTOOL, "report", "--signatures", outdir])
        check(code == 0, "report --signatures: %s" % err)
        _cxx["full"] = out
        _cxx["ln"] = lines_of("attrib.cpp")
    return _cxx["p"], _cxx["report"], _cxx["ln"]


def test_names():
    """C++ names demangled everywhere, the symbol kept; no symbol versions."""
    p, report, ln = cxx_run()
    names = {n.get("name") for n in p.doc["nodes"]}
    check(not any(n and n.startswith("_Z") for n in names),
          "mangled names left: %s" % sorted(n for n in names if n and n.startswith("_Z")))
    check(not any(n and "@" in n for n in names), "versioned names: %s" % [n for n in names if n and "@" in n])
    step = region_with(p, [("frame", "physics::Solver<double>::step(int)", ln["STEP"])])
    fr = p.nodes[step["parent"]]
    check(fr.get("linkage_name") == "_ZN7physics6SolverIdE4stepEi",
          "linkage_name of step: %r" % fr.get("linkage_name"))
    check(p.excl(step, "OMP_PAR_COUNT") == ITERS, "step: %s instances" % p.excl(step, "OMP_PAR_COUNT"))
    # The report names it demangled, with its class and template, at its
    # line; its parameters read (…), and in full with --signatures.
    for text, s in ((report, "physics::Solver<double>::step(…) (attrib.cpp:%d)" % ln["STEP"]),
                    (_cxx["full"], "physics::Solver<double>::step(int) (attrib.cpp:%d)" % ln["STEP"])):
        check(s in text, "the report lacks %r" % s)


def test_inlined():
    """Two regions of two inlined functions called from one function: two
    contexts, each at its inlined call's line and its construct's line."""
    p, report, ln = cxx_run()
    sc = region_with(p, [("frame", "both(double*, int)", ln["CALL_SCALE"]),
                         ("inline", "scale(double*, int)", ln["SCALE"])])
    sh = region_with(p, [("frame", "both(double*, int)", ln["CALL_SHIFT"]),
                         ("inline", "shift(double*, int)", ln["SHIFT"])])
    # Two inlined calls deep: every call at its line.
    dp = region_with(p, [("frame", "deep(double*, int)", ln["CALL_DEEP"]),
                         ("inline", "twice(double*, int)", ln["CALL_TWICE"]),
                         ("inline", "shift(double*, int)", ln["SHIFT"])])
    for r, who in ((sc, "scale"), (sh, "shift"), (dp, "deep")):
        check(p.excl(r, "OMP_PAR_COUNT") == ITERS, "%s: %s instances" % (who, p.excl(r, "OMP_PAR_COUNT")))
    # Shortened contexts keep what tells them apart: every place of the
    # waits table reads differently (each region's barrier is one place).
    waits = re.search(r"\nWaits .*?\n.*?\n((?:  .*\n)+)", report)
    check(waits, "no waits table in the report")
    where = [re.split(r"\s{2,}", l.strip(), maxsplit=6)[-1] for l in waits.group(1).splitlines()]
    check(len(where) == 6 and len(set(where)) == len(where), "waits places read alike: %s" % where)
    # Each region's row also names the body it ran (its outlined function),
    # parameters read (…) by default and in full with --signatures.
    for text, args in ((report, "(…)"), (_cxx["full"], "(double*, int)")):
        a = re.escape(args)
        check(re.search(r"> scale%s \[inlined\] \(attrib.cpp:%d\)\n\s+body: "
                        r"scale%s \[clone .omp_outlined\] \(attrib.cpp:%d\)" % (a, ln["SCALE"], a, ln["SCALE"]),
                        text), "the report's region rows lack the body they ran (%s)" % args)
        for s in ("both%s (attrib.cpp:%d) > scale%s [inlined] (attrib.cpp:%d)"
                  % (args, ln["CALL_SCALE"], args, ln["SCALE"]),
                  "both%s (attrib.cpp:%d) > shift%s [inlined] (attrib.cpp:%d)"
                  % (args, ln["CALL_SHIFT"], args, ln["SHIFT"])):
            check(s in text, "the report lacks %r" % s)


def test_tail_call():
    """relay()'s frame is gone at run time (it jumps to work()); rebuilt
    from the call-site DWARF between main and work."""
    p, report, ln = cxx_run()
    tl = region_with(p, [("frame", "main", ln["RELAY"]), ("tail", "relay(double*, int)", ln["TAIL"]),
                         ("frame", "work(double*, int)", ln["CALL_WORK"]),
                         ("inline", "scale(double*, int)", ln["SCALE"])])
    check(p.excl(tl, "OMP_PAR_COUNT") == ITERS, "relay: %s instances" % p.excl(tl, "OMP_PAR_COUNT"))
    # jumper()'s region is its last statement: a jump to the OpenMP
    # runtime's fork. The region is jumper's, under main.
    jp = region_with(p, [("frame", "main", ln["CALL_JUMPER"]), ("tail", "jumper()", ln["JUMPER"])])
    check(p.excl(jp, "OMP_PAR_COUNT") == ITERS, "jumper: %s instances" % p.excl(jp, "OMP_PAR_COUNT"))


def test_dlclosed():
    ln = lines_of("plugin.c")
    plugin, filler = os.path.join(BIN, "libgtplugin.so"), os.path.join(BIN, "libgtfiller.so")
    outdir, err = run_under_tool(LIB, os.path.join(BIN, "dlclosed"), args=(plugin, filler), env=ENV)
    own = own_times(err, "dlclosed times:")
    p = gtrun.one_profile(GPUTOOL, outdir)
    mods = p.doc.get("modules", [])
    burn = [n for n in p.find("plugin_burn")]
    check(burn, "no plugin_burn frame; frames: %s" % sorted({n.get("name") or "?" for n in p.doc["nodes"]}))
    for n in burn:
        check(os.path.basename(mods[n["module"]]) == "libgtplugin.so",
              "plugin_burn in %s" % mods[n["module"]])
    check(any(n.get("file", "").endswith("plugin.c") and n.get("line") == ln["BURN"] for n in burn),
          "plugin_burn lines: %s" % [(n.get("file"), n.get("line")) for n in burn])
    # Compiled from a relative path: named by its absolute one.
    for n in burn:
        check(os.path.isabs(n["file"]) and os.path.normpath(n["file"]) == n["file"] and
              os.path.samefile(n["file"], os.path.join(SRC, "plugin.c")),
              "plugin_burn's file %r" % n["file"])
    cpu = sum(p.incl(n, "CPUTIME") for n in burn)
    period = 1e9 / int(p.meta("sample_hz"))
    # One thread burns: its samples carry its CPU time, up to a period at
    # each end and to the signals a loaded machine drops (what is checked
    # here is where the time goes, not how well it is sampled).
    bounded(cpu, own["plugin"]["cpu_ns"] * 0.75, own["plugin"]["cpu_ns"] + 2 * period, "plugin CPUTIME")
    # Every frame of the program and of the modules it unloaded keeps its
    # name. (A sample may land in a system library's internal code, which
    # has no symbol without its debug package: not checked.)
    ours = ("dlclosed", "libgtplugin.so", "libgtfiller.so")
    unknown = [n for n in p.doc["nodes"] if n.get("kind") == "frame" and not n.get("name") and
               n.get("module") is not None and os.path.basename(mods[n["module"]]) in ours]
    check(not unknown, "frames without a name: %s" % [(mods[n["module"]], n.get("offset")) for n in unknown])


if __name__ == "__main__":
    main([("names", test_names), ("inlined", test_inlined), ("tail_call", test_tail_call),
          ("dlclosed", test_dlclosed)])
