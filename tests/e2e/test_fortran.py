# SPDX-License-Identifier: MIT
"""Fortran programs, end to end: samples/fortran/physics (flang-19, OpenMP,
LLVM's libomp) and samples/fortran/sites (gfortran, OpenACC on the host)
run under libgputool.so; counts are exact, the 3:1 split of CPU time holds
against what the program measured itself, and names read as Fortran writes
them (physics::shared_step, the program's name) in every section of the
text report and in every export. Skipped (77) only when a sample was not
built because its compiler is missing.
Usage: test_fortran.py BUILD_DIR"""
import gzip
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from gtrun import (bounded, check, main, no_runtime_frames, one_profile, own_times, run,  # noqa: E402
                   run_under_tool)

BUILD = os.path.abspath(sys.argv[1])
LIB = os.path.join(BUILD, "libgputool.so")
GPUTOOL = os.path.join(BUILD, "gputool")
PHYSICS = os.path.join(BUILD, "samples", "fortran", "physics")
SITES = os.path.join(BUILD, "samples", "fortran", "sites")
STEPS_OMP, STEPS_ACC, N_ACC = 20, 10, 100000  # physics.f90, sites.f90
ENV = {"OMP_NUM_THREADS": "2"}
# Sanitizer builds: the samples are not instrumented, the tool is; the
# sanitizer runtime comes preloaded.
BASE = {"LD_PRELOAD": os.environ["GT_TARGET_PRELOAD"]} if os.environ.get("GT_TARGET_PRELOAD") else {}
# A symbol left as the compiler wrote it: flang's _Q names, gfortran's
# module procedures and main program.
MANGLED = re.compile(r"_Q[A-Z]|__\w+_MOD_\w|\bMAIN__|\bchecksum_")


def report_text(outdir):
    txt = [f for f in os.listdir(outdir) if f.endswith(".txt")]
    check(len(txt) == 1, "expected one report in %s, found %s" % (outdir, txt))
    return open(os.path.join(outdir, txt[0])).read()


def sections(text):
    """The text report's sections by title: a section starts at a line
    that begins in the first column, after an empty line."""
    out, title, lines, prev = {}, "header", [], ""
    for line in text.splitlines():
        if line and not line[0].isspace() and prev == "":
            out[title] = "\n".join(lines)
            title, lines = line, []
        lines.append(line)
        prev = line
    out[title] = "\n".join(lines)
    return out


def section(secs, start):
    hits = [t for t in secs if t.startswith(start)]
    check(len(hits) == 1, "no single section %r in %s" % (start, list(secs)))
    return secs[hits[0]]


def readable_names(p):
    """No node named by a mangled symbol; each demangled one keeps its
    linkage name."""
    linked = {}
    for n in p.doc["nodes"]:
        name = n.get("name") or ""
        check(not MANGLED.search(name), "node named %r at %s" % (name, "/".join(p.names(n))))
        if n.get("linkage_name"):
            linked[name] = n["linkage_name"]
    return linked


def region_under(p, caller):
    rs = [n for n in p.find("<omp parallel>") if caller in p.names(n)]
    check(len(rs) == 1, "expected one <omp parallel> under %s, found %d" % (caller, len(rs)))
    return rs[0]


def test_openmp_counts_and_split():
    outdir, err = run_under_tool(LIB, PHYSICS, env=dict(BASE, SAMPLE_TIMES="1", **ENV))
    p = one_profile(GPUTOOL, outdir)
    no_runtime_frames(p)
    linked = readable_names(p)
    check(linked.get("physics::alpha") == "_QMphysicsPalpha", "linkage names %s" % linked)
    own = own_times(err, "physics times:")
    regions = {who: region_under(p, "physics::" + who) for who in ("alpha", "beta")}
    for who, count in (("alpha", 3 * STEPS_OMP), ("beta", STEPS_OMP)):
        r = regions[who]
        names = p.names(r)
        check(names[-2] == "physics::shared_step" and "physics::%s" % who in names[:-2],
              "%s region context %s" % (who, "/".join(names)))
        check(p.excl(r, "OMP_PAR_COUNT") == count,
              "%s instances %s != %d" % (who, p.excl(r, "OMP_PAR_COUNT"), count))
        check(p.excl(r, "OMP_PAR_THREADS") == 2 * count, "%s team sizes %s" % (who, p.excl(r, "OMP_PAR_THREADS")))
        kids = [c.get("name") for c in p.children.get(r["id"], [])]
        check("physics::shared_step [omp parallel body]" in kids, "%s region runs %s" % (who, kids))
        # The regions lie within the program's own wall time around the calls.
        bounded(p.excl(r, "OMP_PAR_TIME"), None, own[who]["wall_ns"] * 1.01 + 1000000, "%s OMP_PAR_TIME" % who)
    # An external procedure (checksum_) and its body read as Fortran names.
    r = region_under(p, "checksum")
    check(p.excl(r, "OMP_PAR_COUNT") == 1, "checksum instances %s" % p.excl(r, "OMP_PAR_COUNT"))
    check("checksum [omp parallel body]" in [c.get("name") for c in p.children.get(r["id"], [])],
          "checksum's region runs %s" % [c.get("name") for c in p.children.get(r["id"], [])])
    check(linked.get("checksum") == "checksum_", "linkage names %s" % linked)
    # The split of CPU time: alpha's share of what alpha and beta spent, as
    # the tool sampled it and as the program measured it (process CPU time).
    # At 200 Hz over about 1.5 s of CPU time the sampled share varies by
    # about 0.025 (one standard deviation): 0.08 holds on a busy machine.
    tool = {who: p.incl(regions[who], "CPUTIME") for who in regions}
    check(tool["beta"] > 0, "no CPU time sampled under beta")
    share_tool = tool["alpha"] / (tool["alpha"] + tool["beta"])
    share_own = own["alpha"]["cpu_ns"] / (own["alpha"]["cpu_ns"] + own["beta"]["cpu_ns"])
    check(abs(share_tool - share_own) < 0.08,
          "alpha's share of CPU time %.3f (tool), %.3f (program)" % (share_tool, share_own))


def test_openmp_names_in_every_view():
    outdir, _ = run_under_tool(LIB, PHYSICS, env=dict(BASE, **ENV))
    outdir_tr, _ = run_under_tool(LIB, PHYSICS, env=dict(BASE, GPUTOOL_TRACE="1", **ENV))
    text = report_text(outdir)
    m = MANGLED.search(text)
    check(not m, "mangled name in the report: %s" % (m and text[max(0, m.start() - 80):m.end() + 40]))
    secs = sections(text)
    for title, want in (("Where the time goes", "physics::alpha"),
                        ("OpenMP parallel regions", "body: physics::shared_step [omp parallel body]"),
                        ("CPU time by calling context", "physics::shared_step [omp parallel body]"),
                        ("Waits", "physics::share"),
                        ("Top-down view", "physics::beta")):
        check(want in section(secs, title), "section %r lacks %r:\n%s" % (title, want, section(secs, title)))
    check("main program" in section(secs, "OpenMP parallel regions"), "the main program unnamed")
    # `gputool report` over the directory: the text again, and each format.
    for fmt, d in (("text", outdir), ("json", outdir), ("folded", outdir), ("html", outdir),
                   ("speedscope", outdir), ("hatchet", outdir), ("pprof", outdir), ("chrome", outdir_tr)):
        out = os.path.join(tempfile.mkdtemp(prefix="gputool-fmt-"), "out")
        code, _, err = run([GPUTOOL, "report", d, "--format", fmt, "-o", out])
        check(code == 0, "--format %s: %d %s" % (fmt, code, err))
        data = open(out, "rb").read()
        if fmt == "pprof":
            data = gzip.decompress(data)  # names as strings of the profile; the linkage too, as system names
            check(b"physics::shared_step [omp parallel body]" in data, "pprof lacks the body's name")
            continue
        body = data.decode()
        # JSON (and the HTML page, which embeds it) keeps each linkage name
        # beside its readable one.
        body = re.sub(r'"linkage_name":"[^"]*"', "", body)
        check("physics::shared_step" in body, "--format %s lacks physics::shared_step" % fmt)
        m = MANGLED.search(body)
        check(not m, "--format %s shows %s" % (fmt, m and body[max(0, m.start() - 80):m.end() + 40]))


def acc_construct(p, name, caller):
    ns = [n for n in p.find(name) if caller in p.names(n)]
    check(len(ns) == 1, "%s under %s: %d nodes" % (name, caller, len(ns)))
    return ns[0]


def test_openacc_sites_bytes_and_names():
    outdir = tempfile.mkdtemp(prefix="gputool-acc-")
    code0, out0, _ = run([SITES], env=BASE)
    code1, out1, _ = run([SITES], env=dict(BASE, ACC_PROFLIB=LIB, GPUTOOL_OUTPUT=outdir))
    check(code0 == code1 == 0 and out0 == out1, "output or exit code changed: %r %r" % (out0, out1))
    p = one_profile(GPUTOOL, outdir)
    linked = readable_names(p)
    check(linked.get("sites") == "MAIN__" and linked.get("transport::saxpy") == "__transport_MOD_saxpy",
          "linkage names %s" % linked)
    host = (p.meta("acc_device") or "").startswith("host")
    bytes_n = 4 * N_ACC
    for name, caller, count, up, down in (
            ("<acc compute>", "transport::saxpy", 3 * STEPS_ACC, 2 * bytes_n, bytes_n),
            ("<acc compute>", "transport::scale", STEPS_ACC, bytes_n, bytes_n),
            ("<acc enter data>", "transport::stage", STEPS_ACC, bytes_n, 0),
            ("<acc update>", "transport::stage", STEPS_ACC, bytes_n, 0),
            ("<acc exit data>", "transport::stage", STEPS_ACC, 0, 0)):
        n = acc_construct(p, name, caller)
        check(p.excl(n, "ACC_COUNT") == count, "%s under %s: ACC_COUNT %s, expected %d"
              % (name, caller, p.excl(n, "ACC_COUNT"), count))
        names = p.names(n)
        check(names[:2] == ["main", "sites"], "%s context %s" % (name, "/".join(names)))
        # On the host the data are the program's own: nothing moves. On a
        # device each data clause moves its 4*N bytes.
        got = (p.incl(n, "ACC_UP_BYTES"), p.incl(n, "ACC_DOWN_BYTES"))
        want = (0, 0) if host else (count * up, count * down)
        check(got == want, "%s under %s on %s: bytes up, down %s, expected %s"
              % (name, caller, p.meta("acc_device"), got, want))
    secs = sections(report_text(outdir))
    acc = section(secs, "OpenACC constructs")
    check("main (sites.f90:" in acc and "> sites (sites.f90:" in acc and "transport::saxpy" in acc,
          "OpenACC section:\n%s" % acc)
    check(not MANGLED.search("\n".join(secs.values())), "mangled name in the report")


TESTS = [(PHYSICS, "flang OpenMP: exact counts and the 3:1 CPU split", test_openmp_counts_and_split),
         (PHYSICS, "flang OpenMP: Fortran names in every section and format", test_openmp_names_in_every_view),
         (SITES, "gfortran OpenACC: counts, bytes and names", test_openacc_sites_bytes_and_names)]
missing = sorted({os.path.basename(exe) for exe, _, _ in TESTS if not os.path.exists(exe)})
if missing:
    # samples/fortran builds a program only where its compiler is.
    print("not built: %s (scripts/install-deps.sh --test installs flang-19 and gfortran)" % ", ".join(missing))
TESTS = [(name, fn) for exe, name, fn in TESTS if os.path.exists(exe)]
if not TESTS:
    sys.exit(77)
main(TESTS)
