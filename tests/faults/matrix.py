# SPDX-License-Identifier: MIT
"""The fault matrix: what real programs, users and machines do to a tool,
each case run against the built tool, with what is expected and what was
observed. docs/RELIABILITY.md is this matrix's output (--markdown).

Usage: matrix.py BUILD_DIR [--area AREA] [--markdown FILE]
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
    case("files", "relative GPUTOOL_OUTPUT, the program chdir()s", "resolved against the start directory")(chdir_rel)

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
        env = {"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "2", "OMP_TOOL_LIBRARIES": lib, "GPUTOOL_OUTPUT": out}
        rc, stdout, err = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", exe, "--secure"], env)
        if "secure 1" not in stdout:
            raise Skip("setuid has no effect here")
        expect(rc == 0 and os.listdir(out) == [] and err.count("inactive in a setuid") == 1,
               "exit %s, files %s, stderr %r" % (rc, os.listdir(out), err))
        return "inactive, said once; nothing written"
    case("files", "a setuid program run by another user", "the tool stays inactive")(setuid)

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

def flood(n, extra=None, busy=0):
    if not os.path.exists(FLOOD):
        raise Skip("no OpenCL build")
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
    try:
        outdir = scratch()
        env = env_with(dict({"OPENCL_LAYERS": LIB}, **(extra or {})), tool=False, outdir=outdir)
        rc, out, err = run([FLOOD, str(n)], env, timeout=300)
    finally:
        for p in procs:
            p.kill()
            p.wait()
    if rc != 0 and "clGetPlatformIDs" in err:
        raise Skip("no OpenCL platform")
    expect(rc == 0 and out == "enqueued %d\n" % n, "exit %s, stdout %r, stderr %r" % (rc, out, err[-300:]))
    doc = one_profile(outdir)
    kernels, lost = total(doc, "GKER_COUNT"), int(meta(doc, "ops_unmeasured") or 0)
    return kernels, lost, outdir


def add_opencl_cases():
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


def collect():
    add_signal_cases()
    add_exit_cases()
    add_file_cases()
    add_report_cases()
    add_thread_cases()
    add_opencl_cases()
    add_mpi_cases()
    add_config_cases()


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
                "runs), so a short program's samples may all land there.\n")


def main():
    area = None
    md = None
    args = sys.argv[2:]
    while args:
        a = args.pop(0)
        if a == "--area":
            area = args.pop(0)
        elif a == "--markdown":
            md = args.pop(0)
    collect()
    results = []
    failed = 0
    for (a, name, expected, fn) in CASES:
        if area and a != area:
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
