# SPDX-License-Identifier: MIT
"""A program ended by a termination signal keeps its profile: it is written,
then the program dies of the same signal; so does one that crashes (abort,
a segmentation fault), as far as can be written. A handler the program
installed, or SIG_IGN, stays the program's. (A sanitizer build has its own
crash handlers: the crash cases are left to the plain build.)
Usage: test_signals.py BUILD_DIR"""
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from gtrun import check, exclusive, main  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
GPUTOOL = os.path.join(BUILD, "gputool")
LIB = os.path.join(BUILD, "libgputool.so")
EXE = os.path.join(BUILD, "tests", "e2e", "until_signal")


def env_with(extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith("GPUTOOL_") and k != "OMP_TOOL_LIBRARIES"}
    e.update({"OMP_NUM_THREADS": "2"}, **extra)
    if os.environ.get("GT_TARGET_PRELOAD"):
        e["LD_PRELOAD"] = os.environ["GT_TARGET_PRELOAD"]
    return e


def run_until(sig, mode=None, via_run=False):
    """Starts the program, sends sig once it is ready; returns (returncode,
    stdout, stderr, output directory)."""
    outdir = tempfile.mkdtemp(prefix="gputool-sig-")
    args = [EXE] + ([mode] if mode else [])
    if via_run:
        cmd, env = [GPUTOOL, "run", "-o", outdir, "--"] + args, env_with({})
    else:
        cmd, env = args, env_with({"OMP_TOOL_LIBRARIES": LIB, "GPUTOOL_OUTPUT": outdir})
    # Unbuffered, a byte at a time: what follows "ready" (the tool's lines
    # come within microseconds after a crash) must stay in the pipe for
    # communicate(), not in a reader's buffer.
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
                         preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0)))
    seen = b""
    while not (seen == b"ready\n" or seen.endswith(b"\nready\n")):
        c = os.read(p.stderr.fileno(), 1)
        if not c:
            break
        seen += c
    check(seen.endswith(b"ready\n"), "the program never got ready: %r" % seen)
    if sig:
        p.send_signal(sig)
    try:
        out, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        raise
    out, err = out.decode(errors="replace"), err.decode(errors="replace")
    return p.returncode, out, err, outdir


def profile_cpu(outdir):
    profs = [f for f in os.listdir(outdir) if f.endswith(".gtprof")]
    txts = [f for f in os.listdir(outdir) if f.endswith(".txt")]
    check(len(profs) == 1 and len(txts) == 1, "files in %s: %s" % (outdir, os.listdir(outdir)))
    r = subprocess.run([GPUTOOL, "report", os.path.join(outdir, profs[0]), "--format", "json"],
                       capture_output=True, text=True)
    check(r.returncode == 0, "gputool report: %s" % r.stderr)
    doc = json.loads(r.stdout)
    return sum(exclusive(n).get("CPUTIME", 0) for n in doc["nodes"]
               if (n.get("name") or "").startswith("work"))


def ended_by(sig, via_run=False):
    code, out, err, outdir = run_until(sig, via_run=via_run)
    check(code == -sig, "exit status %s, not killed by %s; stderr %r" % (code, signal.Signals(sig).name, err))
    check(out == "", "stdout %r" % out)
    check("gputool: report " in err, "no report line on stderr: %r" % err)
    # Ready after 0.2 s of CPU on the initial thread alone: work() was sampled.
    check(profile_cpu(outdir) >= 100000000, "CPU time in work() %s ns" % profile_cpu(outdir))


def test_term():
    ended_by(signal.SIGTERM)


def test_int_gputool_run():
    ended_by(signal.SIGINT, via_run=True)


def test_hup():
    ended_by(signal.SIGHUP)


def crashed(sig, mode):
    code, out, err, outdir = run_until(None, mode=mode)
    check(code == -sig, "exit status %s, not killed by %s; stderr %r" % (code, signal.Signals(sig).name, err))
    check("gputool: report " in err, "no report line on stderr: %r" % err)
    check(profile_cpu(outdir) >= 100000000, "CPU time in work() %s ns" % profile_cpu(outdir))


def test_abort():
    if not os.environ.get("GT_SANITIZER_BUILD"):
        crashed(signal.SIGABRT, "abort")


def test_segv():
    if not os.environ.get("GT_SANITIZER_BUILD"):
        crashed(signal.SIGSEGV, "segv")


def test_own_handler():
    code, out, err, outdir = run_until(signal.SIGTERM, mode="own")
    check(code == 0 and out == "own handler\n", "exit %s, stdout %r: the program's handler did not run" % (code, out))
    profile_cpu(outdir)  # written at the program's exit


def test_ignored():
    code, out, err, outdir = run_until(signal.SIGTERM, mode="ignore")
    check(code == 0 and out == "done\n", "exit %s, stdout %r: SIGTERM was not left ignored" % (code, out))
    profile_cpu(outdir)


main([("SIGTERM", test_term), ("SIGINT through gputool run", test_int_gputool_run), ("SIGHUP", test_hup),
      ("abort(): what can be written", test_abort), ("SIGSEGV: what can be written", test_segv),
      ("the program's own SIGTERM handler", test_own_handler), ("SIGTERM ignored", test_ignored)])
