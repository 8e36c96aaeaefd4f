# SPDX-License-Identifier: MIT
"""The fault matrix: what real programs, users and machines do to a tool,
each case run against the built tool, with what is expected and what was
observed. docs/RELIABILITY.md is this matrix's output (--markdown).

Usage: matrix.py BUILD_DIR [--area AREA] [--case TEXT] [--markdown FILE]
(--case: only the cases whose name contains TEXT)
Exit status 1 if a case fails."""
import json
import os
import platform
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

BUILD = os.path.abspath(sys.argv[1])
GPUTOOL = os.path.join(BUILD, "gputool")
LIB = os.path.join(BUILD, "libgputool.so")
FAULTS = os.path.join(BUILD, "tests", "faults")
HOSTILE = os.path.join(FAULTS, "hostile")
FLOOD = os.path.join(FAULTS, "ocl_flood")
UNTIL = os.path.join(BUILD, "tests", "e2e", "until_signal")
PLANT = os.path.join(BUILD, "tests", "e2e", "plant_links")
EXEC_AFTER = os.path.join(BUILD, "tests", "e2e", "exec_after")
ACC_THREADS = os.path.join(FAULTS, "acc_threads")
MPI_APP = os.path.join(BUILD, "samples", "mpi", "imbalance")
MPI_WAITS_APP = os.path.join(BUILD, "samples", "mpi", "waits")
HEAP_PIN = os.path.join(BUILD, "tests", "e2e", "heap_pin")
MPIRUN = os.environ.get("GT_MPIRUN", "").split()
SANITIZED = bool(os.environ.get("GT_SANITIZER_BUILD"))
ROOT = os.geteuid() == 0

CASES = []


class Fail(Exception):
    pass


class Skip(Exception):
    pass


def expect(cond, observed):
    if not cond:
        raise Fail(observed)


def case(area, name, expected):
    def deco(fn):
        CASES.append((area, name, expected, fn))
        return fn
    return deco


def scratch(prefix="gputool-fault-"):
    return tempfile.mkdtemp(prefix=prefix)


def env_with(extra=None, tool=True, outdir=None):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("GPUTOOL_") and k not in ("OMP_TOOL_LIBRARIES", "OPENCL_LAYERS", "LD_PRELOAD")}
    e["OMP_NUM_THREADS"] = "2"
    if tool:
        e["OMP_TOOL_LIBRARIES"] = LIB
    if outdir:
        e["GPUTOOL_OUTPUT"] = outdir
    if os.environ.get("GT_TARGET_PRELOAD"):
        e["LD_PRELOAD"] = os.environ["GT_TARGET_PRELOAD"]
    e.update(extra or {})
    return e


def counts(codes):
    """Exit codes with how often each came: "0 x3, 139 x2"."""
    return ", ".join("%d x%d" % (c, codes.count(c)) for c in sorted(set(codes)))


def no_core():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run(cmd, env, timeout=120, preexec=None, cwd=None, stdin=subprocess.DEVNULL):
    def pre():
        no_core()
        if preexec:
            preexec()
    p = subprocess.run(cmd, env=env, stdin=stdin, capture_output=True, timeout=timeout, preexec_fn=pre, cwd=cwd)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def files(d, ext):
    return sorted(n for n in os.listdir(d) if n.endswith(ext)) if os.path.isdir(d) else []


def report_json(path):
    r = subprocess.run([GPUTOOL, "report", path, "--format", "json"], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise Fail("gputool report %s: %s" % (path, r.stderr.strip()))
    return json.loads(r.stdout)


def meta(doc, key):
    """A meta key of the one process of a JSON report (docs/REPORT.md)."""
    return doc["processes"][0]["meta"].get(key) if doc.get("processes") else None


def excl(n, metric):
    return n.get("metrics", {}).get(metric, {}).get("excl", {}).get("sum", 0)


def cpu_in(doc, prefix):
    return sum(excl(n, "CPUTIME") for n in doc["nodes"] if (n.get("name") or "").startswith(prefix))


def total(doc, metric):
    return sum(excl(n, metric) for n in doc["nodes"])


def threads(doc):
    return doc["processes"][0]["threads"] if doc.get("processes") else 0


def one_profile(d):
    profs = files(d, ".gtprof")
    expect(len(profs) == 1, "profiles in %s: %s" % (d, os.listdir(d) if os.path.isdir(d) else "none"))
    return report_json(os.path.join(d, profs[0]))


def signame(sig):
    return signal.Signals(sig).name


# ---- signals ------------------------------------------------------------------

def until(sig, mode=None, via_run=False, extra=None, second=None):
    """Runs until_signal; sends sig once it says "ready". Returns (rc, out,
    err, outdir)."""
    outdir = scratch()
    args = [UNTIL] + ([mode] if mode else [])
    if via_run:
        cmd, env = [GPUTOOL, "run", "-o", outdir, "--"] + args, env_with(extra, tool=False)
    else:
        cmd, env = args, env_with(extra, outdir=outdir)
    p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         bufsize=0, preexec_fn=no_core)
    seen = b""
    while not (seen == b"ready\n" or seen.endswith(b"\nready\n")):
        c = os.read(p.stderr.fileno(), 1)
        if not c:
            break
        seen += c
    if not seen.endswith(b"ready\n"):
        p.kill()
        p.communicate()
        raise Fail("never ready: %r" % seen)
    if sig:
        p.send_signal(sig)
        if second:
            p.send_signal(second)
    try:
        out, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise Fail("still running 120 s after the signal")
    return p.returncode, out.decode(errors="replace"), err.decode(errors="replace"), outdir


def died_with_profile(sig, rc, out, err, outdir):
    expect(rc == -sig, "exit status %s; stderr %r" % (rc, err[-300:]))
    expect("gputool: report " in err, "no report line; stderr %r" % err[-300:])
    doc = one_profile(outdir)
    cpu = cpu_in(doc, "work")
    # The program ran 0.2 s of CPU in work() before the signal. On a loaded
    # machine the kernel drops CPU-time timer signals (16 of about 40 arrived
    # in one such run), so the check is that the run's samples are in the
    # profile written at the signal, not how many.
    expect(cpu > 0 and total(doc, "SAMPLES") > 0, "work() has %.3f s CPU" % (cpu / 1e9))
    return "died of %s; profile with %.2f s CPU in work()" % (signame(sig), cpu / 1e9)


TERMINATING = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2,
               signal.SIGALRM, signal.SIGPIPE, signal.SIGXCPU]


def add_signal_cases():
    for sig in TERMINATING:
        case("signals", "%s, default disposition (OMP_TOOL_LIBRARIES)" % signame(sig),
             "profile and report written, then the program dies of %s" % signame(sig))(
            lambda sig=sig: died_with_profile(sig, *until(sig)))
    for sig in TERMINATING:
        case("signals", "%s, under gputool run" % signame(sig),
             "profile written, program dies of %s" % signame(sig))(
            lambda sig=sig: died_with_profile(sig, *until(sig, via_run=True)))
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        def own(sig=sig):
            rc, out, err, outdir = until(sig, "own", extra={"UNTIL_SIGNAL_SIG": str(int(sig))})
            expect(rc == 0 and out == "own handler\n", "exit %s, stdout %r" % (rc, out))
            one_profile(outdir)
            return "the program's handler ran, exit 0; profile written at its exit"
        case("signals", "%s, the program's own handler" % signame(sig),
             "the program's handler runs as without the tool")(own)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        def ignored(sig=sig):
            rc, out, err, outdir = until(sig, "ignore", extra={"UNTIL_SIGNAL_SIG": str(int(sig))})
            expect(rc == 0 and out == "done\n", "exit %s, stdout %r" % (rc, out))
            one_profile(outdir)
            return "ignored; the program ended by itself, exit 0, profile written"
        case("signals", "%s ignored by the program" % signame(sig), "stays ignored")(ignored)
    for mode, sig in (("abort", signal.SIGABRT), ("segv", signal.SIGSEGV), ("fpe", signal.SIGFPE),
                      ("ill", signal.SIGILL), ("bus", signal.SIGBUS)):
        def crashed(mode=mode, sig=sig):
            if SANITIZED:
                raise Skip("a sanitizer build has crash handlers of its own")
            return died_with_profile(sig, *until(None, mode))
        case("signals", "crash: %s (%s)" % (signame(sig), mode),
             "what can be written is written, then the program dies of %s" % signame(sig))(crashed)

    def off():
        rc, out, err, outdir = until(signal.SIGTERM, extra={"GPUTOOL_ON_SIGNAL": "0"})
        expect(rc == -signal.SIGTERM and not files(outdir, ".gtprof"), "exit %s, files %s" % (rc, os.listdir(outdir)))
        return "died of SIGTERM; no profile"
    case("signals", "SIGTERM with GPUTOOL_ON_SIGNAL=0", "dies at once, as without the tool")(off)

    def killed():
        rc, out, err, outdir = until(signal.SIGKILL)
        expect(rc == -signal.SIGKILL and os.listdir(outdir) == [], "exit %s, files %s" % (rc, os.listdir(outdir)))
        return "died of SIGKILL; no file, no partial file"
    case("signals", "SIGKILL", "dies; nothing half-written is left")(killed)

    def twice():
        rc, out, err, outdir = until(signal.SIGTERM, second=signal.SIGINT)
        expect(rc in (-signal.SIGTERM, -signal.SIGINT), "exit %s" % rc)
        expect(len(files(outdir, ".gtprof")) <= 1 and not files(outdir, ".tmp"), "files %s" % os.listdir(outdir))
        return "died of %s; %s" % (signame(-rc), "profile written" if files(outdir, ".gtprof") else
                                   "the second signal ended it before the profile")
    # The tool's handler returns at once, and the program goes on to exit
    # while the profile is written (raise-exit), or the signal comes while
    # the exit writes it (term-in-exit): the exit waits for the write, then
    # the program dies of the signal all the same.
    for mode, what in (("raise-exit", "SIGTERM raised, then the program returns from main at once"),
                       ("term-in-exit", "SIGTERM while the program's exit writes the output")):
        def exits(mode=mode):
            # term-in-exit's signal comes when its thread sees the first
            # file, at best while the write lasts: on a busy machine the
            # thread may wake only once the exit is done, when the program
            # exits 0 as it would without the tool (about 1 run in 30 with
            # two busy CPUs). Up to three runs, then: a tool that let the
            # exit swallow a signal taken during the write failed 18 in 20.
            for attempt in range(3 if mode == "term-in-exit" else 1):
                rc, out, err, outdir = hostile([mode])
                if rc == -signal.SIGTERM:
                    break
            expect(rc == -signal.SIGTERM, "exit status %s; stderr %r" % (rc, err[-300:]))
            one_profile(outdir)
            return "died of SIGTERM; profile written" + (" (run %d)" % (attempt + 1) if attempt else "")
        case("signals", what, "dies of SIGTERM, as without the tool; profile written")(exits)

    case("signals", "SIGTERM then SIGINT at once",
         "the program dies of a signal, at once if the second one comes first (as a second Ctrl-C)")(twice)


# ---- how programs end ------------------------------------------------------------

def hostile(args, outdir=None, extra=None, timeout=120, preexec=None, tool=True, cwd=None):
    outdir = outdir or scratch()
    rc, out, err = run([HOSTILE] + args, env_with(extra, tool=tool, outdir=outdir), timeout=timeout,
                       preexec=preexec, cwd=cwd)
    return rc, out, err, outdir


def add_exit_cases():
    for mode, code in (("exit", 3), ("return", 7), ("thread-exit", 5)):
        def ends(mode=mode, code=code):
            rc, out, err, outdir = hostile([mode, str(code)])
            expect(rc == code, "exit %s; stderr %r" % (rc, err[-300:]))
            doc = one_profile(outdir)
            # The profile holds the run's samples. Where they hang is the
            # attribution tests' to check: on a busy machine a thread spends
            # much of its CPU time spinning in the runtime for a teammate
            # that is not running, which is charged to the region's node,
            # and of some 20 samples none may land in burn().
            cpu, burn = total(doc, "CPUTIME"), cpu_in(doc, "burn")
            expect(cpu > 0, "no CPU time in the profile")
            return "exit %d; profile with %.2f s of CPU time, %.2f s in burn()" % (rc, cpu / 1e9, burn / 1e9)
        case("exit", "%s(%d)" % (mode, code), "exit status %d kept; profile written" % code)(ends)

    def quick_exit():
        rc, out, err, outdir = hostile(["_exit", "4"])
        expect(rc == 4 and out == "", "exit %s, stdout %r" % (rc, out))
        return "exit 4; %s" % ("no profile (no exit handlers run)" if not files(outdir, ".gtprof") else "profile written")
    case("exit", "_exit(4)", "exit status 4 kept; nothing hangs (no exit handler runs, so no profile)")(quick_exit)

    def at_exit():
        rc, out, err, outdir = hostile(["atexit-omp"])
        expect(rc == 0 and out == "done\natexit ran\n", "exit %s, stdout %r, stderr %r" % (rc, out, err[-300:]))
        one_profile(outdir)
        return "the handler's team ran; exit 0; profile written"
    case("exit", "an exit handler runs an OpenMP team", "runs as without the tool")(at_exit)

    def forked():
        rc, out, err, outdir = hostile(["fork"])
        expect(rc == 0 and out == "child 0\ndone\n", "exit %s, stdout %r" % (rc, out))
        profs = files(outdir, ".gtprof")
        expect(len(profs) == 2, "profiles %s" % profs)
        return "parent and child each wrote a profile"
    case("exit", "fork(), the child computes and exits", "each process has its own profile")(forked)

    def system_true():
        rc, out, err, outdir = hostile(["system"])
        expect(rc == 0 and out == "system 0\ndone\n", "exit %s, stdout %r" % (rc, out))
        profs = files(outdir, ".gtprof")
        expect(len(profs) == 1, "profiles %s" % profs)
        return "one profile (the shell measured nothing)"
    case("exit", "system(\"true\")", "the program's profile only")(system_true)

    def execs():
        if SANITIZED:
            raise Skip("the sanitizer build cannot be preloaded into /bin/echo")
        d = scratch()
        rc, out, err = run([GPUTOOL, "run", "-o", d, "--", EXEC_AFTER], env_with(tool=False))
        expect(rc == 0 and out == "after exec\n", "exit %s, stdout %r" % (rc, out))
        doc = one_profile(d)
        expect(cpu_in(doc, "burn") > 0, "no burn() in the profile")
        return "profile written before the exec; the exec'd program printed its line"
    case("exit", "the program ends by exec()", "profile written before the exec (gputool run)")(execs)

    def deep():
        rc, out, err, outdir = hostile(["deep", "20000"], extra={"GPUTOOL_MAX_DEPTH": "64"})
        expect(rc == 0 and out == "done\n", "exit %s, stdout %r" % (rc, out))
        one_profile(outdir)
        return "exit 0; profile written (paths cut at GPUTOOL_MAX_DEPTH)"
    case("exit", "a team 20,000 calls deep", "no crash; paths cut at the depth limit")(deep)

    def own_segv():
        rc, out, err, outdir = hostile(["own-segv"])
        expect(rc == 0 and out == "recovered\ndone\n", "exit %s, stdout %r" % (rc, out))
        one_profile(outdir)
        return "the program's handler recovered; exit 0"
    case("exit", "the program's own SIGSEGV handler (siglongjmp)", "the program's handler keeps working")(own_segv)

    def own_prof():
        rc, out, err, outdir = hostile(["own-prof"])
        expect(rc == 0 and out == "prof ticks\ndone\n", "exit %s, stdout %r" % (rc, out))
        one_profile(outdir)
        return "the program's ITIMER_PROF ticked; exit 0"
    case("exit", "the program's own SIGPROF timer", "the program's timer keeps working")(own_prof)


# ---- files ----------------------------------------------------------------------

def add_file_cases():
    def planted():
        d = scratch()
        victim = os.path.join(d, "victim")
        with open(victim, "w") as f:
            f.write("precious\n")
        rc, out, err = run([PLANT, d, victim], env_with(outdir=d))
        expect(rc == 0, "exit %s" % rc)
        expect(open(victim).read() == "precious\n", "the link's target was written")
        profs = [n for n in files(d, ".gtprof") if not os.path.islink(os.path.join(d, n))]
        expect(len(profs) == 1 and profs[0].endswith("-1.gtprof"), "files %s" % os.listdir(d))
        return "target untouched; profile at %s" % profs[0]
    case("files", "links planted at the profile's and report's names", "links not followed; next free name")(planted)

    def open_dir():
        d = os.path.join(scratch(), "open")
        os.mkdir(d)
        os.chmod(d, 0o777)
        rc, out, err = run([PLANT], env_with(outdir=d))
        expect(rc == 0 and os.listdir(d) == [] and "others may write" in err, "exit %s, files %s, stderr %r" %
               (rc, os.listdir(d), err))
        return "refused in one line; nothing written"
    case("files", "output directory others may write (no sticky bit)", "refused, one line")(open_dir)

    def sticky():
        d = os.path.join(scratch(), "sticky")
        os.mkdir(d)
        os.chmod(d, 0o1777)
        rc, out, err = run([PLANT], env_with(outdir=d))
        expect(rc == 0 and files(d, ".gtprof"), "exit %s, files %s" % (rc, os.listdir(d)))
        return "written"
    case("files", "sticky world-writable directory of ours", "written")(sticky)

    def theirs():
        if not ROOT:
            raise Skip("needs root")
        d = os.path.join(scratch(), "theirs")
        os.mkdir(d)
        os.chown(d, 65534, 65534)
        rc, out, err = run([PLANT], env_with(outdir=d))
        expect(rc == 0 and os.listdir(d) == [] and "belongs to another user" in err, "files %s, stderr %r" %
               (os.listdir(d), err))
        return "refused in one line"
    case("files", "output directory of another user", "refused, one line")(theirs)

    def chdir_rel():
        d = scratch()
        rc, out, err = run([PLANT, "--chdir"], env_with(outdir="out"), cwd=d)
        expect(rc == 0 and files(os.path.join(d, "out"), ".gtprof"), "exit %s, %s" % (rc, os.listdir(d)))
        return "profile in the start directory's out/"
    case("files", "relative GPUTOOL_OUTPUT, the program chdir()s after the tool started (OMP_TOOL_LIBRARIES)",
         "resolved against the directory the tool started in")(chdir_rel)

    def chdir_first(via_run):
        def fn():
            d = scratch()
            os.mkdir(os.path.join(d, "sub"))
            if via_run:
                # The library loaded by libomp alone, as without the preload.
                cmd, env = [GPUTOOL, "run", "-o", "out", "--"], env_with({"GPUTOOL_PRELOAD": "0"}, tool=False)
            else:
                cmd, env = [], env_with(outdir="out")
            rc, out, err = run(cmd + [PLANT, "--chdir-first", "sub"], env, cwd=d)
            want, other = (d, os.path.join(d, "sub")) if via_run else (os.path.join(d, "sub"), d)
            expect(rc == 0 and files(os.path.join(want, "out"), ".gtprof") and not
                   os.path.exists(os.path.join(other, "out")),
                   "exit %s; out/ in %s, in sub: %s" % (rc, os.listdir(d), os.listdir(os.path.join(d, "sub"))))
            expect(("gputool: report %s/out/" % os.path.realpath(want)) in err, "the exit line: %r" % err[-300:])
            return "profile in %s/out/, named on stderr" % ("the start directory" if via_run else "sub")
        return fn
    case("files", "relative GPUTOOL_OUTPUT, the program chdir()s before the OpenMP runtime starts "
         "(OMP_TOOL_LIBRARIES)",
         "resolved against the directory the program is in when the runtime starts the tool, the one "
         "documented (nothing in the process tells the start directory then); the exit line names it")(
        chdir_first(False))
    case("files", "the same under gputool run -o out, the library not preloaded (GPUTOOL_PRELOAD=0)",
         "resolved against the directory gputool run started in (it passes the program an absolute "
         "path)")(chdir_first(True))

    def same_pid():
        if not ROOT or not shutil.which("unshare"):
            raise Skip("needs root and unshare")
        d = scratch()
        names = []
        for _ in range(2):
            rc, out, err = run(["unshare", "--pid", "--fork", "--mount-proc", PLANT], env_with(outdir=d))
            if rc != 0 and "unshare" in err:
                raise Skip("no PID namespaces here: %s" % err.strip())
            expect(rc == 0, "exit %s, stderr %r" % (rc, err))
        names = files(d, ".gtprof")
        expect(len(names) == 2, "profiles %s" % names)
        return "two profiles: %s" % ", ".join(names)
    case("files", "the same pid twice (a container's pid 1)", "the second run takes a new name")(same_pid)

    def log_link():
        d = scratch()
        victim = os.path.join(d, "victim")
        with open(victim, "w") as f:
            f.write("precious\n")
        log = os.path.join(d, "log")
        os.symlink(victim, log)
        rc, out, err = run([PLANT], env_with({"GPUTOOL_LOG": log, "GPUTOOL_VERBOSE": "2"}, outdir=d))
        expect(rc == 0 and open(victim).read() == "precious\n", "exit %s; target written" % rc)
        expect("cannot open log file" in err, "stderr %r" % err[-300:])
        return "not followed; logging on stderr, said once"
    case("files", "GPUTOOL_LOG is a planted link", "not followed")(log_link)

    def log_append():
        d = scratch()
        log = os.path.join(d, "log")
        with open(log, "w") as f:
            f.write("earlier\n")
        rc, out, err = run([PLANT], env_with({"GPUTOOL_LOG": log, "GPUTOOL_VERBOSE": "2"}, outdir=d))
        text = open(log).read()
        expect(rc == 0 and text.startswith("earlier\n") and "gputool[" in text, "log %r" % text[:200])
        return "appended after what was there"
    case("files", "GPUTOOL_LOG names an existing file", "appended to, never truncated")(log_append)

    def out_is_file():
        d = scratch()
        f = os.path.join(d, "afile")
        with open(f, "w") as fh:
            fh.write("x")
        rc, out, err = run([PLANT], env_with(outdir=f))
        expect(rc == 0 and out == "team ran\n" and open(f).read() == "x", "exit %s, stdout %r" % (rc, out))
        expect("gputool" in err and "Not a directory" in err, "stderr %r" % err)
        return "program ran as usual; one line: %s" % err.strip().splitlines()[0][:80]
    case("files", "GPUTOOL_OUTPUT is a file", "the file untouched; one line; the program unaffected")(out_is_file)

    def unwritable():
        rc, out, err = run([PLANT], env_with(outdir="/proc/gputool-cannot-be-here"))
        expect(rc == 0 and out == "team ran\n" and "gputool" in err, "exit %s, stdout %r, stderr %r" % (rc, out, err))
        return "program ran as usual; one line"
    case("files", "GPUTOOL_OUTPUT cannot be created", "said at start; the program unaffected")(unwritable)

    def long_path():
        d = scratch()
        deep = os.path.join(d, *(["d" * 60] * 10))
        rc, out, err = run([PLANT], env_with(outdir=deep))
        expect(rc == 0 and files(deep, ".gtprof"), "exit %s, stderr %r" % (rc, err[-300:]))
        return "profile written under a %d-character path" % len(deep)
    case("files", "output path of over 600 characters", "written, no path cut")(long_path)

    def shell_two():
        d = scratch()
        rc, out, err = run([GPUTOOL, "run", "-o", d, "--", "sh", "-c", "%s; %s return 0" % (PLANT, HOSTILE)],
                           env_with(tool=False))
        expect(rc == 0 and len(files(d, ".gtprof")) == 2, "exit %s, files %s" % (rc, os.listdir(d)))
        code, text, rerr = report_cmd([d])
        expect(code == 0 and "programs     plant_links, hostile" in text and "processes    2 (all rank 0)" in text,
               "report: exit %s, %r" % (code, (rerr or text)[:400]))
        doc = report_json(d)
        pids = sorted(int(p["meta"]["pid"]) for p in doc["processes"])
        expect(len(set(pids)) == 2 and len({p["meta"].get("run") for p in doc["processes"]}) == 1,
               "processes %s" % [p["meta"] for p in doc["processes"]])
        return "one run: the report merges both, told apart by pid and program"
    case("files", "gputool run -- sh -c \"a; b\" (two OpenMP programs)",
         "one run: `gputool report` merges both, each process named by pid and program")(shell_two)

    def job_script(kind):
        def fn():
            d = scratch()
            os.mkdir(os.path.join(d, "sub"))
            if kind == "make":
                with open(os.path.join(d, "Makefile"), "w") as f:
                    f.write("all: a b c\na:\n\t%s\nb:\n\t%s return 0\nc:\n\t$(MAKE) -s -C sub -f ../Makefile d\n"
                            "d:\n\t%s\n" % (PLANT, HOSTILE, PLANT))
                cmd = ["make", "-s", "-j2"]
            else:
                cmd = ["sh", "-c", "%s & (cd sub && %s return 0) & wait; %s" % (PLANT, HOSTILE, PLANT)]
            rc, out, err = run([GPUTOOL, "run", "-o", "out", "--"] + cmd, env_with(tool=False), cwd=d)
            got = files(os.path.join(d, "out"), ".gtprof")
            expect(rc == 0 and len(got) == 3 and not os.path.exists(os.path.join(d, "sub", "out")),
                   "exit %s, out/: %s, sub/: %s, stderr %r" % (rc, got, os.listdir(os.path.join(d, "sub")),
                                                               err[-300:]))
            code, text, rerr = report_cmd([os.path.join(d, "out")])
            expect(code == 0 and "processes    3" in text, "report: exit %s, %r" % (code, (rerr or text)[:300]))
            return "3 profiles in out/ (none in sub/); one report of 3 processes"
        return fn
    case("files", "a job script under gputool run -o out: programs in parallel, one in a subdirectory, then one more",
         "every process in out/, one run, one report")(job_script("sh"))
    case("files", "make -j2 under gputool run -o out, with a recursive make -C sub",
         "every recipe's program in out/, one run, one report (make itself measured nothing)")(job_script("make"))

    def two_at_once():
        d = os.path.join(scratch(), "same")
        marks = os.path.dirname(d)
        prog = ["sh", "-c", "touch %s/ran.$$; sleep 2" % marks]
        ps = [subprocess.Popen([GPUTOOL, "run", "-o", d, "--"] + prog, env=env_with(tool=False),
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
              for _ in range(2)]
        res = [(p.wait(timeout=60), p.stderr.read().decode(errors="replace")) for p in ps]
        ran = [n for n in os.listdir(marks) if n.startswith("ran.")]
        codes = sorted(r[0] for r in res)
        loser = [e for c, e in res if c == 125]
        expect(codes == [0, 125] and len(ran) == 1, "exit statuses %s, programs run %d: %r" %
               (codes, len(ran), [e for c, e in res]))
        line = loser[0].strip()
        expect(len(line.splitlines()) == 1 and "taken by another run" in line, "refusal %r" % line)
        return "one ran; the other: exit 125 before its program, %r" % line[:70]
    case("files", "two gputool run -o DIR started together", "the directory is claimed once: one runs, the other is "
         "refused in one line, exit 125, before its program starts")(two_at_once)

    def existing_dir():
        d = scratch()
        rc, out, err = run([GPUTOOL, "run", "-o", d, "--", "true"], env_with(tool=False))
        expect(rc == 0 and os.listdir(d) == [".gputool-run"], "an empty directory: exit %s, %s" % (rc, os.listdir(d)))
        rc, out, err = run([GPUTOOL, "run", "-o", d, "--", PLANT], env_with(tool=False))
        expect(rc == 0 and len(files(d, ".gtprof")) == 1, "after a run that wrote nothing: exit %s, %s, %r" %
               (rc, os.listdir(d), err))
        rc, out, err = run([GPUTOOL, "run", "-o", d, "--", PLANT], env_with(tool=False))
        expect(rc == 125 and "already holds the profiles of another run" in err and len(files(d, ".gtprof")) == 1,
               "a third run: exit %s, %r" % (rc, err))
        return "empty: taken; after a run that wrote nothing: taken; with a run's profiles: refused, exit 125"
    case("files", "gputool run -o an existing directory: empty, then holding the claim of a run that wrote "
         "nothing, then another run's profile", "taken, taken, refused (docs/REPORT.md)")(existing_dir)

    def run_o_file():
        d = scratch()
        f, marker = os.path.join(d, "afile"), os.path.join(d, "ran")
        open(f, "w").close()
        rc, out, err = run([GPUTOOL, "run", "-o", f, "--", "/usr/bin/touch", marker], env_with(tool=False))
        expect(rc == 125 and not os.path.exists(marker), "exit %s, stderr %r" % (rc, err))
        return "exit 125 before the program starts"
    case("files", "gputool run -o FILE", "refused before the program starts")(run_o_file)

    def setuid():
        if not ROOT or not shutil.which("setpriv"):
            raise Skip("needs root and setpriv")
        d = scratch()
        os.chmod(d, 0o755)
        exe, lib, out = os.path.join(d, "plant_links"), os.path.join(d, "libgputool.so"), os.path.join(d, "out")
        shutil.copy(PLANT, exe)
        shutil.copy(LIB, lib)
        os.chmod(lib, 0o755)
        os.chown(exe, 0, 0)
        os.chmod(exe, 0o4755)
        os.mkdir(out)
        os.chmod(out, 0o1777)
        # Files only root may write: what the user names there must stay as it is.
        home = os.path.join(d, "root-home")
        os.mkdir(home, 0o700)
        log, rec = os.path.join(home, "log"), os.path.join(home, "record")
        with open(log, "w") as f:
            f.write("root's\n")
        env = {"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "2", "OMP_TOOL_LIBRARIES": lib, "GPUTOOL_OUTPUT": out,
               "GPUTOOL_LOG": log, "GPUTOOL_CUPTI_RECORD": rec, "GPUTOOL_NVDISASM": os.path.join(home, "nvdisasm"),
               "GPUTOOL_CUPTI_PATH": os.path.join(home, "libcupti.so")}
        rc, stdout, err = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", exe, "--secure"], env)
        if "secure 1" not in stdout:
            raise Skip("setuid has no effect here")
        expect(rc == 0 and os.listdir(out) == [] and err.count("inactive in a setuid") == 1,
               "exit %s, files %s, stderr %r" % (rc, os.listdir(out), err))
        expect(open(log).read() == "root's\n" and sorted(os.listdir(home)) == ["log"],
               "root's log %r, files in root's folder %s" % (open(log).read(), os.listdir(home)))
        return "inactive, said once on stderr; nothing written, GPUTOOL_LOG in root's folder untouched"
    case("files", "a setuid program run by another user (GPUTOOL_LOG, GPUTOOL_OUTPUT, ... in root's folder)",
         "the tool stays inactive; no file the environment names is written")(setuid)

    def mkdir_p():
        d = os.path.join(scratch(), "a", "b", "c")
        rc, out, err = run([PLANT], env_with(outdir=d))
        expect(rc == 0 and files(d, ".gtprof"), "exit %s" % rc)
        return "created and written"
    case("files", "GPUTOOL_OUTPUT does not exist yet (three levels)", "created")(mkdir_p)

    def nofile():
        rc, out, err, outdir = hostile(["nofile"])
        expect(rc == 0 and out == "done\n", "exit %s, stdout %r" % (rc, out))
        expect("gputool" in err, "nothing said: %r" % err)
        return "exit 0; said: %s" % [l for l in err.splitlines() if "gputool" in l][0][:90]
    case("files", "no file descriptor left at exit (RLIMIT_NOFILE)",
         "the program unaffected; the failure said in one line")(nofile)

    def stderr_reused():
        d = scratch()
        data = os.path.join(d, "data")
        rc, out, err, outdir = hostile(["close-stderr", data])
        expect(rc == 0 and open(data).read() == "data\n", "exit %s, data file %r" % (rc, open(data).read()))
        expect("gputool: report " in err, "report line not on the original stderr: %r" % err)
        return "data file holds only the program's bytes; the tool's line on the original stderr"
    case("files", "the program closes stderr and opens a data file as fd 2",
         "the tool's lines stay out of the data file")(stderr_reused)

    def stderr_closed():
        rc, out, err, outdir = hostile(["return", "0"], preexec=lambda: os.close(2))
        expect(rc == 0 and out == "", "exit %s, stdout %r" % (rc, out))
        one_profile(outdir)
        return "exit 0; profile written"
    case("files", "started with stderr closed", "runs; profile written")(stderr_closed)

    def stdout_closed():
        rc, out, err, outdir = hostile(["exit", "0"], preexec=lambda: os.close(1))
        expect(rc == 0, "exit %s" % rc)
        one_profile(outdir)
        return "exit 0; profile written"
    case("files", "started with stdout closed", "runs; profile written")(stdout_closed)

    def big_stdout():
        rc0, out0, err0 = run([HOSTILE, "big-stdout"], env_with(tool=False))
        rc1, out1, err1, outdir = hostile(["big-stdout"])
        expect(rc0 == rc1 == 0 and out0 == out1 and len(out0) > 4000000, "exit %s/%s, %d vs %d bytes" %
               (rc0, rc1, len(out0), len(out1)))
        return "%d bytes, identical" % len(out1)
    case("files", "4 MiB on stdout", "byte for byte what the program writes without the tool")(big_stdout)

    def fsize():
        d = scratch()
        outdir, stdout = os.path.join(d, "out"), os.path.join(d, "stdout")
        lim = 4096  # the program's 3000 bytes fit; the profile does not
        with open(stdout, "wb") as f:
            p = subprocess.run([HOSTILE, "buffered", "3000"], env=env_with(outdir=outdir), stdout=f,
                               stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=120,
                               preexec_fn=lambda: (no_core(), resource.setrlimit(resource.RLIMIT_FSIZE, (lim, lim))))
        err = p.stderr.decode(errors="replace")
        text = open(stdout).read()
        want = "".join("\n" if i % 64 == 63 else chr(ord("a") + i % 26) for i in range(3000)) + "done\n"
        expect(p.returncode == 0 and text == want, "exit %s, %d of %d bytes on stdout; stderr %r" %
               (p.returncode, len(text), len(want), err[-300:]))
        lines = [l for l in err.splitlines() if "File too large" in l]
        left = os.listdir(outdir) if os.path.isdir(outdir) else []
        expect(len(lines) == 1 and left == [], "stderr %r; files left %s" % (err[-300:], left))
        return "exit 0, stdout intact; one line: %s; no file left" % lines[0][:70]
    case("files", "ulimit -f 4 KiB: the profile does not fit (SIGXFSZ)",
         "exit 0, the program's buffered stdout written; one line; no partial file")(fsize)

    def stderr_gone():
        outdir = scratch()
        p = subprocess.Popen([HOSTILE, "buffered", "100"], env=env_with(outdir=outdir), stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=no_core)
        p.stderr.close()  # nobody reads the tool's lines
        out = p.stdout.read()
        rc = p.wait(timeout=120)
        expect(rc == 0 and len(out) == 105, "exit %s, %d bytes on stdout" % (rc, len(out)))
        one_profile(outdir)
        return "exit 0; stdout intact; profile written"
    case("files", "stderr a pipe nobody reads (the tool's line raises SIGPIPE)",
         "exit 0, the program's output intact")(stderr_gone)

    def killed_writing():
        def gone(d):
            return {n for n in os.listdir(d) if n.endswith((".gtprof", ".txt", ".gttrace"))}

        def trace_whole(path):
            data = open(path, "rb").read()
            pos = 16
            while len(data) - pos >= 16:
                tag, n = int.from_bytes(data[pos:pos + 4], "little"), int.from_bytes(data[pos + 4:pos + 12], "little")
                pos += 12 + n + 4
                if tag == 0:
                    return pos == len(data)
            return False

        def attempt(delay):
            outdir = scratch()
            p = subprocess.Popen([HOSTILE, "wide", "12"], env=env_with({"GPUTOOL_TRACE": "1"}, outdir=outdir),
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 preexec_fn=no_core)
            line = p.stderr.readline()
            t0 = time.time()
            if delay is not None:
                time.sleep(delay)
                p.kill()
            p.stderr.read()
            p.wait(timeout=120)
            expect(line == b"exiting\n", "never said exiting: %r" % line)
            return outdir, time.time() - t0

        outdir, took = attempt(None)
        expect(len(gone(outdir)) == 3, "files of an undisturbed run: %s" % os.listdir(outdir))
        rng = __import__("random").Random(7)
        whole = left = 0
        for _ in range(12):
            outdir, _ = attempt(rng.uniform(0, took))
            names = gone(outdir)
            profs = [n for n in names if n.endswith(".gtprof")]
            for n in names:
                path = os.path.join(outdir, n)
                expect(os.path.getsize(path) > 0, "%s is empty (files %s)" % (n, sorted(os.listdir(outdir))))
            expect(len(profs) <= 1 and (profs or not names), "files without a profile: %s" % sorted(names))
            if profs:
                prof = os.path.join(outdir, profs[0])
                rc, out, err = report_cmd([prof], timeout=120)
                expect(rc == 0, "%s cannot be read: %s" % (profs[0], err.strip()[:200]))
                stem = prof[:-len(".gtprof")]
                if os.path.exists(stem + ".txt"):
                    expect(open(stem + ".txt").read() == out, "%s.txt is not the whole report" % stem)
                if os.path.exists(stem + ".gttrace"):
                    expect(trace_whole(stem + ".gttrace"), "%s.gttrace is cut short" % stem)
                whole += 1
            temps = [n for n in os.listdir(outdir) if n not in names]
            expect(all(n.startswith(".") and n.endswith(".part") for n in temps), "other files: %s" % temps)
            if temps:
                left += 1
                if profs:
                    rc, out, err = report_cmd([outdir], timeout=120)
                    expect(rc == 0, "report of the directory: %s" % err.strip()[:200])
        return ("12 kills within the %.1f s exit: %d left a whole profile (with its report or trace when there), "
                "%d nothing; %d left .part files, which report ignores; no empty or cut file" %
                (took, whole, 12 - whole, left))
    case("files", "SIGKILL at random moments while the exit writes a large profile, trace and report",
         "no empty or cut file under a final name")(killed_writing)


# ---- reading profiles -------------------------------------------------------------

def report_cmd(args, timeout=30):
    p = subprocess.run([GPUTOOL, "report"] + args, capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr


_good = []


def good_profile():
    if not _good:
        rc, out, err, outdir = hostile(["return", "0"])
        _good.append(os.path.join(outdir, files(outdir, ".gtprof")[0]))
    return _good[0]


def add_report_cases():
    def not_regular(kind):
        def fn():
            d = scratch()
            if kind == "fifo":
                path = os.path.join(d, "p.gtprof")
                os.mkfifo(path)
            elif kind == "device":
                path = "/dev/zero"
            else:
                path = d
            rc, out, err = report_cmd([path])
            expect(rc == 1 and ("not a regular file" in err or "no *.gtprof" in err), "exit %s, %r" % (rc, err))
            return "exit 1 at once: %s" % err.strip().splitlines()[0][:80]
        return fn
    case("report", "report of a FIFO", "refused at once (no wait for a writer)")(not_regular("fifo"))
    case("report", "report of /dev/zero", "refused at once (no endless read)")(not_regular("device"))
    case("report", "report of a directory without profiles", "says so, exit 1")(not_regular("dir"))

    def damaged(how):
        def fn():
            src = good_profile()
            data = open(src, "rb").read()
            d = scratch()
            path = os.path.join(d, "x.gtprof")
            if how == "empty":
                data = b""
            elif how == "truncated":
                data = data[:len(data) // 2]
            elif how == "garbage":
                data = bytes((i * 151 + 7) % 256 for i in range(4096))
            elif how == "flipped":
                b = bytearray(data)
                b[len(b) // 2] ^= 0x55
                data = bytes(b)
            with open(path, "wb") as f:
                f.write(data)
            rc, out, err = report_cmd([path])
            expect(rc == 1 and err.strip(), "exit %s, stderr %r" % (rc, err))
            return "exit 1: %s" % err.strip().splitlines()[0][:80]
        return fn
    for how in ("empty", "truncated", "garbage", "flipped"):
        case("report", "report of a %s profile" % how, "refused with a reason; no crash")(damaged(how))

    def via_link():
        d = scratch()
        link = os.path.join(d, "l.gtprof")
        os.symlink(good_profile(), link)
        rc, out, err = report_cmd([link])
        expect(rc == 0 and "gputool report" in out, "exit %s, %r" % (rc, err))
        return "read"
    case("report", "report of a link to a profile", "read (reading follows links; writing never does)")(via_link)

    def out_link():
        d = scratch()
        victim = os.path.join(d, "victim")
        with open(victim, "w") as f:
            f.write("precious\n")
        link = os.path.join(d, "r.txt")
        os.symlink(victim, link)
        rc, out, err = report_cmd([good_profile(), "-o", link])
        expect(rc != 0 and open(victim).read() == "precious\n", "exit %s; target %r" % (rc, open(victim).read()))
        return "refused (exit %d); target untouched" % rc
    case("report", "report -o a planted link", "not followed")(out_link)

    def out_is_input():
        d = scratch()
        prof, other = os.path.join(d, "a.gtprof"), os.path.join(d, "b.gtprof")
        shutil.copy(good_profile(), prof)
        os.link(prof, other)
        os.symlink(prof, os.path.join(d, "l.gtprof"))
        trace = os.path.join(d, "a.gttrace")
        with open(trace, "wb") as f:
            f.write(b"GTTRACE\0" + bytes(8))
        before = open(prof, "rb").read()
        seen = []
        for args in ([prof, "-o", prof], [prof, "-o", other], [os.path.join(d, "l.gtprof"), "-o", prof],
                     [prof, "-o", os.path.join(d, "l.gtprof")], [d, "-o", other], [d + "/", "-o", prof],
                     [prof, "--format", "chrome", "-o", trace]):
            rc, out, err = report_cmd(args)
            expect(rc != 0 and len(err.strip().splitlines()) == 1 and open(prof, "rb").read() == before and
                   os.path.getsize(trace) == 16, "%s: exit %s, stderr %r" % (" ".join(args), rc, err))
            seen.append(rc)
        return "7 ways refused (exit %d), one line each: %s" % (seen[0], err.strip()[:90])
    case("report", "report -o its own input (the same path, a hard link, a link, a profile of the directory, "
         "the trace beside it)", "refused, one line, nothing written")(out_is_input)

    def huge(what):
        def fn():
            d = scratch()
            path = os.path.join(d, "x.gtprof")
            head = open(good_profile(), "rb").read()[:16]
            if what == "trace":
                shutil.copy(good_profile(), path)
                path, report = os.path.join(d, "x.gttrace"), [path, "--format", "chrome"]
            else:
                report = [path]
            with open(path, "wb") as f:
                if what == "trace":
                    # A real header, then a chunk that claims 2^62 bytes.
                    f.write(b"GTTRACE\0" + (1).to_bytes(4, "little") + bytes(4) + (1).to_bytes(4, "little") +
                            (1 << 62).to_bytes(8, "little"))
                elif what == "header":
                    # A real header, then a first section that claims 2^62 bytes.
                    f.write(head + (1).to_bytes(4, "little") + (1 << 62).to_bytes(8, "little"))
                elif what == "frames":
                    # A real header and a first section that fits: only the size tells.
                    f.write(head + (1).to_bytes(4, "little") + ((4 << 30) - 28).to_bytes(8, "little"))
                # Sparse: no disk used. Under the size bound, the header case
                # must be refused from its frames, not its size.
                f.truncate((512 << 20) if what in ("header", "trace") else (4 << 30))
            probe = ("import resource, subprocess, sys\n"
                     "r = subprocess.run(sys.argv[1:], capture_output=True, stdin=subprocess.DEVNULL, timeout=300)\n"
                     "sys.stdout.write('%d %d\\n' % (r.returncode, "
                     "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
                     "sys.stdout.write(r.stderr.decode(errors='replace'))\n")
            t0 = time.time()
            p = subprocess.run([sys.executable, "-c", probe, GPUTOOL, "report"] + report, capture_output=True,
                               text=True, timeout=320)
            took = time.time() - t0
            first, _, err = p.stdout.partition("\n")
            rc, rss_kib = (int(x) for x in first.split())
            expect((rc == 1 or what == "trace") and rss_kib < 64 * 1024 and err.strip(),
                   "exit %d, peak RSS %d MiB, %.1f s, stderr %r" % (rc, rss_kib >> 10, took, err[-300:]))
            return "exit %d, peak RSS %d MiB, %.2f s: %s" % (rc, rss_kib >> 10, took, err.strip().splitlines()[0][:90])
        return fn
    case("report", "report of a 4 GiB sparse profile (truncate -s 4G)",
         "refused from its size, nothing read; bounded memory")(huge("zeros"))
    case("report", "report of a 512 MiB sparse profile with a real header, a section claiming 2^62 bytes",
         "refused from its header, nothing more read; bounded memory")(huge("header"))
    case("report", "report of a 4 GiB sparse profile with a real header and sections that fit",
         "refused from its size; bounded memory")(huge("frames"))
    case("report", "--format chrome with a 512 MiB sparse trace whose first chunk claims 2^62 bytes",
         "the trace's damage said, nothing more read; bounded memory")(huge("trace"))


# ---- threads and memory -------------------------------------------------------------

def add_thread_cases():
    def vlimit():
        if SANITIZED:
            raise Skip("a sanitizer reserves terabytes of shadow memory")
        lim = 1000000 * 1024
        rc, out, err, outdir = hostile(["threads", "3000", "10"],
                                       preexec=lambda: resource.setrlimit(resource.RLIMIT_AS, (lim, lim)),
                                       timeout=300)
        expect(rc == 0 and out == "threads 3000\ndone\n", "exit %s, stdout %r, stderr %r" % (rc, out, err[-300:]))
        doc = one_profile(outdir)
        n = threads(doc)
        expect(n >= 3001 and not meta(doc, "threads_unmeasured"), "%d threads in the profile, unmeasured %s" %
               (n, meta(doc, "threads_unmeasured")))
        return "exit 0; %d threads in the profile, none unmeasured" % n
    case("threads", "3,000 threads under ulimit -v 1000000", "runs; every thread measured")(vlimit)

    def tls_oom():
        # The loader allocates a dlopened library's dynamic thread-local
        # storage with malloc at a thread's first touch and ends the process
        # (exit 127) when that fails: the tool's own storage is initial-exec,
        # and libunwind's is touched only after a malloc of its size worked.
        if SANITIZED:
            raise Skip("a sanitizer reserves terabytes of shadow memory")
        args = ["threads", "200", "100"]

        def at(kib, tool):
            lim = kib * 1024
            rc, out, err, outdir = hostile(args, tool=tool, timeout=120,
                                           preexec=lambda: resource.setrlimit(resource.RLIMIT_AS, (lim, lim)))
            shutil.rmtree(outdir, ignore_errors=True)
            return rc, "thread-local data" in err
        # Where the bare program starts to fail of its own accord (libomp out
        # of memory), to 2 MiB: the tool runs there and a little above.
        lo, hi = 8192, 1 << 20
        while hi - lo > 2048:
            mid = (lo + hi) // 2
            if at(mid, False)[0] == 0:
                hi = mid
            else:
                lo = mid
        bare, tool, tls = [], [], []
        for kib in range(hi - 4096, hi + 24 * 1024, 4096):
            bare.append(at(kib, False)[0])
            for _ in range(5):
                rc, said = at(kib, True)
                tool.append(rc)
                if rc == 127 or said:
                    tls.append("%d KiB: exit %d" % (kib, rc))
        expect(not tls, "loader out of memory for thread-local data in %d of %d runs (%s)" %
               (len(tls), len(tool), "; ".join(tls)))
        return "%d runs at %d-%d KiB, none out of memory for thread-local data (exits %s; bare: %s)" % (
            len(tool), hi - 4096, hi + 20 * 1024, counts(tool), counts(bare))
    case("threads", "200 threads, 100 at a time, at the edge of ulimit -v, 35 runs",
         "the tool's thread-local storage never makes the loader end the program")(tls_oom)

    def limit():
        rc, out, err, outdir = hostile(["threads", "20", "5"])
        expect(rc == 0, "exit %s" % rc)
        full = threads(one_profile(outdir))
        rc, out, err, outdir = hostile(["threads", "20", "5"], extra={"GPUTOOL_MAX_THREADS": "4"})
        expect(rc == 0 and out == "threads 20\ndone\n", "exit %s" % rc)
        doc = one_profile(outdir)
        n, un = threads(doc), int(meta(doc, "threads_unmeasured") or 0)
        expect(n == 4 and n + un == full, "%d measured + %d unmeasured, %d without the limit" % (n, un, full))
        txt = open(os.path.join(outdir, files(outdir, ".txt")[0])).read()
        expect("unmeasured" in txt, "no unmeasured line in the report")
        return "%d measured + %d counted = %d threads; said in the report" % (n, un, full)
    case("threads", "more threads than GPUTOOL_MAX_THREADS=4", "the others counted and reported")(limit)

    def acc_only():
        outdir = scratch()
        env = env_with({"ACC_PROFLIB": LIB}, tool=False, outdir=outdir)
        if os.environ.get("GT_ASAN_RUNTIME"):
            env["LD_PRELOAD"] = os.environ["GT_ASAN_RUNTIME"]  # an uninstrumented gcc program
        rc, out, err = run([ACC_THREADS, "20"], env)
        expect(rc == 0 and out.endswith("threads 20\n"), "exit %s, stdout %r, stderr %r" % (rc, out, err[-300:]))
        timers = int(out.split()[1])
        doc = one_profile(outdir)
        # A thread that starts after another ended takes its record over.
        n, reused = threads(doc), int(meta(doc, "threads_reused") or 0)
        expect(timers <= 1 and n + reused == 21 and n <= 21,
               "%d timers left after 20 threads ended; %d threads in the profile, %d reused" %
               (timers, n, reused))
        return "%d timer left (the main thread's); %d threads in %d records" % (timers, n + reused, n)
    case("threads", "20 threads only OpenACC saw end", "their CPU-time timers deleted at their end")(acc_only)


# ---- OpenCL under load ---------------------------------------------------------------

# Runs cmd in a process of its own and writes its exit status, whether the
# tool's monitor thread was found, and the peak RSS of its children (the
# command alone) to argv[1]: RUSAGE_CHILDREN of this process would keep the
# largest child of every case run before. With argv[2] == "1" it finds the
# monitor thread ("gputool-monitor") and sets it SCHED_IDLE, so that beside
# busy loops it gets almost no CPU: the monitor falls behind at will.
PEAK_RSS = """
import os, resource, subprocess, sys, time
path, starve, cmd = sys.argv[1], sys.argv[2] == "1", sys.argv[3:]
p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL)
found = 0
while starve and not found and p.poll() is None:
    try:
        for tid in os.listdir("/proc/%d/task" % p.pid):
            with open("/proc/%d/task/%s/comm" % (p.pid, tid)) as f:
                if f.read().strip() == "gputool-monitor":
                    os.sched_setscheduler(int(tid), os.SCHED_IDLE, os.sched_param(0))
                    found = 1
    except OSError:
        pass
    time.sleep(0.005)
rc = p.wait()
with open(path, "w") as f:
    f.write("%d %d %d" % (rc, found, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
"""


def peak_rss(cmd, env, starve=False, timeout=300):
    """(exit status, stdout, stderr, peak RSS in KiB, monitor starved) of cmd."""
    fd, path = tempfile.mkstemp(prefix="gputool-rss-")
    os.close(fd)
    try:
        rc, out, err = run([sys.executable, "-c", PEAK_RSS, path, "1" if starve else "0"] + cmd, env,
                           timeout=timeout)
        expect(rc == 0, "the measuring process failed: %s" % err[-300:])
        status, found, kb = (int(x) for x in open(path).read().split())
    finally:
        os.unlink(path)
    return status, out, err, kb, found


def busy_loops(n):
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def stop_all(procs):
    for p in procs:
        p.kill()
        p.wait()


# What the layer may hold beyond the program's own memory: the commands in
# flight (GPUTOOL_MAX_INFLIGHT, 65,536 by default, about 1 KiB each with the
# runtime's event) and the tool's fixed costs, with room for the runtime's
# own queue, which grows differently when the enqueues run at another pace.
FLOOD_RSS_BOUND_KB = 256 * 1024


def flood(n, extra=None, busy=0):
    if not os.path.exists(FLOOD):
        raise Skip("no OpenCL build")
    procs = busy_loops(busy)
    try:
        outdir = scratch()
        env = env_with(dict({"OPENCL_LAYERS": LIB}, **(extra or {})), tool=False, outdir=outdir)
        rc, out, err = run([FLOOD, str(n)], env, timeout=300)
    finally:
        stop_all(procs)
    if rc != 0 and "clGetPlatformIDs" in err:
        raise Skip("no OpenCL platform")
    expect(rc == 0 and out == "enqueued %d\n" % n, "exit %s, stdout %r, stderr %r" % (rc, out, err[-300:]))
    doc = one_profile(outdir)
    kernels, lost = total(doc, "GKER_COUNT"), int(meta(doc, "ops_unmeasured") or 0)
    return kernels, lost, outdir


def add_opencl_cases():
    def flood_memory():
        if not os.path.exists(FLOOD):
            raise Skip("no OpenCL build")
        n = 1000000
        procs = busy_loops(2)
        try:
            bare = peak_rss([FLOOD, str(n)], env_with(tool=False))
            outdir = scratch()
            tool = peak_rss([FLOOD, str(n)], env_with({"OPENCL_LAYERS": LIB}, tool=False, outdir=outdir),
                            starve=True)
        finally:
            stop_all(procs)
        if bare[0] != 0 and "clGetPlatformIDs" in bare[2]:
            raise Skip("no OpenCL platform")
        expect(bare[0] == 0 and bare[1] == "enqueued %d\n" % n, "bare run: exit %s, stdout %r" % bare[:2])
        expect(tool[:2] == bare[:2], "under the tool: exit %s, stdout %r; bare: exit %s, stdout %r" %
               (tool[0], tool[1], bare[0], bare[1]))
        expect(tool[4], "the monitor thread was not found")
        doc = one_profile(outdir)
        kernels, lost = total(doc, "GKER_COUNT"), int(meta(doc, "ops_unmeasured") or 0)
        expect(kernels + lost == n, "%d measured + %d unmeasured != %d" % (kernels, lost, n))
        # A sanitizer keeps freed memory in quarantine: RSS says nothing there.
        expect(SANITIZED or tool[3] <= bare[3] + FLOOD_RSS_BOUND_KB, "peak RSS %d MiB under the tool, %d MiB bare: over %d MiB more" %
               (tool[3] // 1024, bare[3] // 1024, FLOOD_RSS_BOUND_KB // 1024))
        return "peak RSS %d MiB, bare %d MiB; output and exit 0 unchanged; %d measured + %d counted = %d" % (
            tool[3] // 1024, bare[3] // 1024, kernels, lost, n)
    case("opencl", "1,000,000 enqueues with no wait, the monitor thread starved (SCHED_IDLE beside two busy loops)",
         "peak RSS within 256 MiB of the bare run's; output unchanged; every kernel measured or counted")(flood_memory)

    def bounded(busy):
        def fn():
            kernels, lost, outdir = flood(100000, {"GPUTOOL_MAX_INFLIGHT": "1000"}, busy)
            expect(kernels + lost == 100000, "%d measured + %d unmeasured != 100000" % (kernels, lost))
            if lost:
                txt = open(os.path.join(outdir, files(outdir, ".txt")[0])).read()
                expect("device operation" in txt, "no unmeasured line in the report")
            return "%d measured + %d counted as not measured = 100000" % (kernels, lost)
        return fn
    case("opencl", "100,000 enqueues, at most 1,000 in flight", "every kernel measured or counted")(bounded(0))
    case("opencl", "the same beside two busy loops", "every kernel measured or counted")(bounded(2))

    def all_measured():
        kernels, lost, outdir = flood(20000)
        expect(kernels == 20000 and lost == 0, "%d measured, %d unmeasured" % (kernels, lost))
        return "20000 measured"
    case("opencl", "20,000 enqueues, default bound", "all measured")(all_measured)


# ---- MPI ------------------------------------------------------------------------------

def mpirun(n, args):
    if not MPIRUN or not os.path.exists(MPI_APP):
        raise Skip("no MPI build")
    p = subprocess.run(MPIRUN + ["-np", str(n)] + args, capture_output=True, text=True, timeout=300,
                       env=env_with({"KMP_BLOCKTIME": "0"}, tool=False))
    return p.returncode, p.stdout, p.stderr


def add_mpi_cases():
    def status():
        d = scratch()
        rc, out, err = mpirun(2, [GPUTOOL, "run", "-o", d, "--", MPI_APP, "1000", "--exit", "3"])
        expect(rc == 3 and len(files(d, ".gtprof")) == 2, "exit %s, files %s" % (rc, os.listdir(d)))
        return "exit 3 through gputool run and mpirun; 2 profiles"
    case("mpi", "every rank exits 3", "the status comes back; every rank's profile")(status)

    def term():
        d = scratch()
        rc, out, err = mpirun(2, [GPUTOOL, "run", "-o", d, "--", MPI_APP, "1000", "--signal"])
        expect(rc != 0 and len(files(d, ".gtprof")) == 2, "exit %s, files %s" % (rc, os.listdir(d)))
        r = report_cmd([d])
        expect(r[0] == 0 and "missing" not in r[1], "report: %s" % r[1][:300])
        return "exit %d; both profiles (the rank SIGTERM ended, and the one mpirun then ended)" % rc
    case("mpi", "a rank dies of SIGTERM", "it and the ranks mpirun then ends keep their profiles")(term)

    def kill():
        d = scratch()
        rc, out, err = mpirun(2, [GPUTOOL, "run", "-o", d, "--", MPI_APP, "1000", "--kill"])
        r = report_cmd([d])
        expect(rc != 0 and r[0] == 0 and "1 of 2 ranks wrote no profile here: 1\n" in r[1],
               "exit %s; report %s" % (rc, r[1][:300]))
        return "the report says: 1 of 2 ranks wrote no profile here: 1"
    case("mpi", "a rank dies of SIGKILL", "the merged report names the missing rank")(kill)


    def root_env(extra=None):
        e = dict(extra or {})
        if ROOT:  # OpenMPI refuses root without these, a singleton included
            e.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
        return e

    def wait_launchers(d, timeout=30):
        """Waits until no launcher process of the run (it inherited
        GPUTOOL_OUTPUT=d) is left: orted outlives a singleton's exit."""
        key = ("GPUTOOL_OUTPUT=%s" % d).encode()
        end = time.time() + timeout
        while time.time() < end:
            left = 0
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    with open("/proc/%s/environ" % pid, "rb") as f:
                        env = f.read().split(b"\0")
                    exe = os.path.basename(os.readlink("/proc/%s/exe" % pid))
                except OSError:
                    continue
                left += key in env and exe in ("orted", "prted", "orterun", "prterun")
            if not left:
                return
            time.sleep(0.2)
        raise Fail("a launcher of the run still runs after %d s" % timeout)

    def singleton():
        if not MPIRUN or not os.path.exists(MPI_APP):
            raise Skip("no MPI build")
        if SANITIZED:
            # The daemon inherits the preload: a sanitizer build of the
            # library cannot load into it (no sanitizer runtime there).
            raise Skip("a sanitizer build of the library cannot load into OpenMPI's daemon")
        d = scratch()
        rc, out, err = run([GPUTOOL, "run", "-o", d, "--sample-hz", "1000", "--", MPI_APP, "2000"],
                           env_with(root_env({"KMP_BLOCKTIME": "0"}), tool=False))
        wait_launchers(d)
        got = files(d, ".gtprof")
        expect(rc == 0 and len(got) == 1 and got[0].startswith("imbalance-"), "exit %s, profiles %s, stderr %r" %
               (rc, got, err[-300:]))
        return "one profile, the program's (%s); OpenMPI's daemon wrote none" % got[0]
    case("mpi", "an MPI program without mpirun (singleton MPI_Init) under gputool run",
         "only the program measured: the daemon OpenMPI starts for it (orted) stays inactive")(singleton)

    def launcher_in_run():
        if not MPIRUN or not os.path.exists(MPI_APP):
            raise Skip("no MPI build")
        d = scratch()
        rc, out, err = run([GPUTOOL, "run", "-o", d, "--sample-hz", "1000", "--"] + MPIRUN +
                           ["-np", "2", MPI_APP, "2000"], env_with(root_env({"KMP_BLOCKTIME": "0"}), tool=False),
                           timeout=300)
        wait_launchers(d)
        got = files(d, ".gtprof")
        expect(rc == 0 and len(got) == 2 and all(g.startswith("imbalance-") for g in got),
               "exit %s, profiles %s, stderr %r" % (rc, got, err[-300:]))
        code, text, rerr = report_cmd([d])
        expect(code == 0 and "processes    2 (ranks 0-1)" in text, "report: exit %s, %r" % (code, (rerr or text)[:300]))
        return "the 2 ranks' profiles, none of mpirun; one report of ranks 0-1"
    case("mpi", "gputool run -- mpirun -np 2 PROGRAM (the launcher inside the run)",
         "the ranks measured, mpirun not; one run")(launcher_in_run)

    def mpmd_one_measured():
        if not MPIRUN or not os.path.exists(MPI_WAITS_APP):
            raise Skip("no MPI build")
        d = scratch()
        app = [MPI_WAITS_APP, "1000000", "4", "5"]
        rc, out, err = mpirun(1, [GPUTOOL, "run", "-o", d, "--"] + app + [":", "-np", "2"] + app)
        expect(rc == 0 and "waits: 3 ranks, 4 rounds, sum 3.0" in out and len(files(d, ".gtprof")) == 1,
               "exit %s, stdout %r, files %s" % (rc, out[-200:], os.listdir(d)))
        code, text, rerr = report_cmd([d, "--format", "json"])
        doc = json.loads(text) if code == 0 else {"nodes": []}
        names = [n["name"] for n in doc["nodes"]]
        expect("<mpi MPI_Allreduce>" in names and not any("MPI_IDLE" in n["metrics"] for n in doc["nodes"]),
               "report: exit %s, %r" % (code, (rerr or text)[:300]))
        return "the job ends as without the tool; rank 0's calls measured, no waits across ranks"
    case("mpi", "mpirun -np 1 gputool run -- A : -np 2 A (one rank of three measured)",
         "no collective of the tool's: waits across ranks off, nothing hangs")(mpmd_one_measured)

    def waits_off():
        if not MPIRUN or not os.path.exists(MPI_WAITS_APP):
            raise Skip("no MPI build")
        d = scratch()
        p = subprocess.run(MPIRUN + ["-np", "2", "-x", "GPUTOOL_MPI_WAITS=0", GPUTOOL, "run", "-o", d, "--",
                                     MPI_WAITS_APP, "1000000", "4", "5"], capture_output=True, text=True,
                           timeout=300, env=env_with({}, tool=False))
        code, text, rerr = report_cmd([d, "--format", "json"])
        doc = json.loads(text) if code == 0 else {"nodes": []}
        calls = [n for n in doc["nodes"] if (n["name"] or "").startswith("<mpi ")]
        expect(p.returncode == 0 and calls and not any("MPI_IDLE" in n["metrics"] for n in doc["nodes"]),
               "exit %s, %d calls, report %r" % (p.returncode, len(calls), (rerr or text)[:300]))
        return "%d call sites measured, no MPI_IDLE" % len(calls)
    case("mpi", "GPUTOOL_MPI_WAITS=0", "the calls measured, no wait states (no collective of the tool's)")(waits_off)


# ---- configuration ---------------------------------------------------------------------

def add_config_cases():
    def invalid():
        rc, out, err, outdir = hostile(["return", "0"], extra={"GPUTOOL_MAX_DEPTH": "lots"})
        expect(rc == 0 and err.count("GPUTOOL_MAX_DEPTH='lots' is not valid") == 1, "stderr %r" % err)
        one_profile(outdir)
        return "one line; the default used; profile written"
    case("config", "GPUTOOL_MAX_DEPTH=lots", "one line, the default used")(invalid)

    def unknown():
        rc, out, err, outdir = hostile(["return", "0"], extra={"GPUTOOL_FROBNICATE": "1"})
        expect(rc == 0 and err.count("unknown variable GPUTOOL_FROBNICATE") == 1, "stderr %r" % err)
        return "one line"
    case("config", "an unknown GPUTOOL_ variable", "one line, ignored")(unknown)

    def forged():
        forge = "\ngputool[output]: forged"
        rc, out, err, outdir = hostile(["return", "0"], extra={
            "GPUTOOL_MAX_DEPTH": "lots" + forge, "GPUTOOL_SAMPLE": "cpux" + forge,
            "GPUTOOL_LOG": "/proc/no/log" + forge, "GPUTOOL_FROB" + forge: "1"})
        bad = [l for l in err.splitlines() if "forged" in l and not l.rstrip().endswith("\\ngputool[output]: forged")
               and "\\ngputool[output]: forged" not in l]
        expect(rc == 0 and not bad and err.count("\\ngputool[output]: forged") >= 4,
               "lines %r" % err[-600:])
        rc, out, err = run([HOSTILE, "return", "0"], env_with(outdir="/proc/no\x1b[2Jdir"))
        expect(rc == 0 and "\x1b" not in err and "\\x1b[2Jdir" in err, "stderr %r" % err[-300:])
        return "values echoed escaped (\\n, \\x1b), one line each"
    case("config", "GPUTOOL_* values and names with a newline or an escape sequence",
         "echoed escaped: no forged log line")(forged)


def add_heap_cases():
    def pin_faults(how):
        outdir = scratch()
        cmd = [HEAP_PIN, "20"]
        extra = {"OMP_NUM_THREADS": "2"}
        if how == "run":
            cmd = [GPUTOOL, "run", "-o", outdir, "--"] + cmd
            env = env_with(extra, tool=False)
        else:
            env = env_with(extra, tool=how == "omp", outdir=outdir)
        rc, out, err = run(cmd, env)
        expect(rc == 0, "exit %d: %s" % (rc, err))
        for l in err.splitlines():
            if l.startswith("heap_pin: minflt "):
                return int(l.split()[2]), out
        raise Fail("no 'heap_pin: minflt' line: %r" % err)

    def same_faults():
        if SANITIZED:
            raise Skip("the sanitizer runtime replaces the program's allocator")
        bare, out = pin_faults("bare")
        seen = []
        for how in ("omp", "run"):
            got, tool_out = pin_faults(how)
            expect(tool_out == out, "%s: stdout changed" % how)
            expect(abs(got - bare) <= 0.05 * bare,
                   "%s: %d page faults, %d without the tool" % (how, got, bare))
            seen.append("%s %d" % (how, got))
        return "faults: bare %d, %s" % (bare, ", ".join(seen))
    case("heap", "a program that frees 12 MiB of temporaries each iteration (glibc trims them)",
         "the same page faults as without the tool (within 5 %), OMP_TOOL_LIBRARIES and gputool run")(same_faults)


def collect():
    add_signal_cases()
    add_exit_cases()
    add_file_cases()
    add_report_cases()
    add_thread_cases()
    add_opencl_cases()
    add_mpi_cases()
    add_config_cases()
    add_heap_cases()


def markdown(results, path):
    by = {}
    for r in results:
        by[r[4]] = by.get(r[4], 0) + 1
    with open(path, "w") as f:
        f.write("# Reliability: the fault matrix\n\n")
        f.write("What programs, users and machines do to a profiler, and what gputool does about it. Every row\n"
                "is a case of `tests/faults/matrix.py`, run by `ctest -L faults`; this page is its output\n"
                "(`GT_MPIRUN=\"mpirun --oversubscribe\" tests/faults/matrix.py BUILD_DIR --markdown docs/RELIABILITY.md`;\n"
                "as root, add `--allow-run-as-root` to GT_MPIRUN).\n\n")
        f.write("Last run: %s, %s, %s (%d CPUs); %s.\n\n" % (
            time.strftime("%Y-%m-%d"), platform.platform(), "root" if ROOT else "not root", os.cpu_count(),
            ", ".join("%d %s" % (v, k) for k, v in sorted(by.items()))))
        f.write("| # | area | case | expected | observed | result |\n|---|---|---|---|---|---|\n")
        for i, (area, name, expected, observed, result) in enumerate(results, 1):
            f.write("| %d | %s | %s | %s | %s | %s |\n" % (i, area, name.replace("|", "\\|"), expected,
                                                       observed.replace("|", "\\|").replace("\n", " "), result))
        f.write("\nLimits, said where they apply: `_exit()` runs no exit handler, so a program that ends\n"
                "with it leaves no profile; SIGKILL cannot be caught (an MPI job's killed rank is named as\n"
                "missing by `gputool report`); a crash inside the tool itself, or a second crash while\n"
                "writing, ends the program without a profile.\n"
                "\nOn a busy machine, a thread of a team spins in the runtime while a teammate waits for a\n"
                "CPU; that CPU time is the region's (charged to its node, not to the function the teammate\n"
                "runs), so a short program's samples may all land there.\n"
                "\nKnown fault, cause not found yet: on a machine with more runnable threads than CPUs\n"
                "(4 busy loops and the suite on 2 CPUs), about 1 run in 30 of a 0.6 s OpenMP program takes\n"
                "no CPU-time sample at all (no timer error, nothing dropped), with this library and the\n"
                "one before it alike; the exit cases, which check that the profile holds CPU time, then fail.\n"
                "Both threads' timers were armed (CLOCK_THREAD_CPUTIME_ID, no error) and the handler was\n"
                "never entered.\n")


def main():
    area = None
    only = None
    md = None
    args = sys.argv[2:]
    while args:
        a = args.pop(0)
        if a == "--area":
            area = args.pop(0)
        elif a == "--case":
            only = args.pop(0)
        elif a == "--markdown":
            md = args.pop(0)
    collect()
    results = []
    failed = 0
    for (a, name, expected, fn) in CASES:
        if (area and a != area) or (only and only not in name):
            continue
        t0 = time.time()
        try:
            observed, result = fn(), "pass"
        except Skip as e:
            observed, result = "skipped: %s" % e, "skipped"
        except Fail as e:
            observed, result = str(e), "FAIL"
            failed += 1
        except Exception as e:  # a broken case is a failure, with its reason
            observed, result = "%s: %s" % (type(e).__name__, e), "FAIL"
            failed += 1
        print("%-7s %-8s %s -- %s (%.1f s)" % (result, a, name, observed, time.time() - t0), flush=True)
        results.append((a, name, expected, observed, result))
    print("%d cases, %d failed" % (len(results), failed))
    if md:
        markdown(results, md)
    sys.exit(1 if failed else 0)


main()
