# SPDX-License-Identifier: MIT
"""Output that follows no link and overwrites nothing: links planted where
the profile goes are left alone (and what they point to), the files take
the next free name; a directory another user owns, or that others may
write without the sticky bit, is refused in one line; a relative output
directory is the one of the program's start, wherever it is at exit.
Usage: test_output_safety.py BUILD_DIR"""
import os
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from gtrun import check, main  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
LIB = os.path.join(BUILD, "libgputool.so")
EXE = os.path.join(BUILD, "tests", "e2e", "plant_links")


def run(args, outdir, cwd=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUTOOL_")}
    env.update(OMP_NUM_THREADS="2", OMP_TOOL_LIBRARIES=LIB, GPUTOOL_OUTPUT=outdir)
    if os.environ.get("GT_TARGET_PRELOAD"):
        env["LD_PRELOAD"] = os.environ["GT_TARGET_PRELOAD"]
    p = subprocess.run([EXE] + args, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    check(p.returncode == 0 and p.stdout == "team ran\n", "exit %d, stdout %r, stderr %r" % (p.returncode, p.stdout, p.stderr))
    return p.stderr


def test_planted_links():
    d = tempfile.mkdtemp(prefix="gputool-safe-")
    victim = os.path.join(d, "victim")
    with open(victim, "w") as f:
        f.write("precious\n")
    err = run([d, victim], d)
    with open(victim) as f:
        check(f.read() == "precious\n", "the file a planted link points to was written")
    links = [n for n in os.listdir(d) if os.path.islink(os.path.join(d, n))]
    check(len(links) == 2, "the planted links: %s" % links)
    profs = [n for n in os.listdir(d) if n.endswith(".gtprof") and not os.path.islink(os.path.join(d, n))]
    check(len(profs) == 1 and profs[0].endswith("-1.gtprof"), "profiles beside the links: %s" % os.listdir(d))
    check(profs[0][:-len(".gtprof")] + ".txt" in os.listdir(d), "no report beside the profile")
    check("gputool: report %s" % os.path.join(d, profs[0][:-len(".gtprof")]) in err, "stderr %r" % err)


def test_refused_directories():
    d = tempfile.mkdtemp(prefix="gputool-safe-")
    open_dir = os.path.join(d, "open")
    os.mkdir(open_dir)
    os.chmod(open_dir, 0o777)
    err = run([], open_dir)
    check(os.listdir(open_dir) == [], "files written in a directory others may write: %s" % os.listdir(open_dir))
    check("others may write" in err, "stderr %r" % err)
    sticky = os.path.join(d, "sticky")
    os.mkdir(sticky)
    os.chmod(sticky, 0o1777)
    run([], sticky)
    check(any(n.endswith(".gtprof") for n in os.listdir(sticky)), "nothing written in a sticky directory of ours")
    if os.geteuid() == 0:
        theirs = os.path.join(d, "theirs")
        os.mkdir(theirs)
        os.chown(theirs, 65534, 65534)
        err = run([], theirs)
        check(os.listdir(theirs) == [], "files written in another user's directory")
        check("belongs to another user" in err, "stderr %r" % err)


def test_relative_after_chdir():
    d = tempfile.mkdtemp(prefix="gputool-safe-")
    err = run(["--chdir"], "out", cwd=d)
    out = os.path.join(d, "out")
    check(os.path.isdir(out) and any(n.endswith(".gtprof") for n in os.listdir(out)),
          "no profile in the start's out/: %s; stderr %r" % (os.listdir(d), err))
    check(not os.path.exists("/out"), "the profile followed the program to /")


def test_report_reads_files_only():
    """`gputool report` of a FIFO or a device says so at once, instead of
    waiting for a writer or reading without end."""
    d = tempfile.mkdtemp(prefix="gputool-safe-")
    fifo = os.path.join(d, "p.gtprof")
    os.mkfifo(fifo)
    for path in (fifo, "/dev/zero", d):
        p = subprocess.run([os.path.join(BUILD, "gputool"), "report", path], capture_output=True, text=True,
                           timeout=30)
        check(p.returncode == 1 and "not a regular file" in p.stderr, "report %s: %d %r" % (path, p.returncode, p.stderr))


def test_setuid():
    """A setuid program run by another user (AT_SECURE): the tool stays
    inactive and says so once; nothing is written where the user asked."""
    if os.geteuid() != 0:
        print("  (skipped: needs root to install a setuid program)")
        return
    d = tempfile.mkdtemp(prefix="gputool-suid-")
    os.chmod(d, 0o755)
    exe, lib, out = os.path.join(d, "plant_links"), os.path.join(d, "libgputool.so"), os.path.join(d, "out")
    for src, dst in ((EXE, exe), (LIB, lib)):
        with open(src, "rb") as a, open(dst, "wb") as b:
            b.write(a.read())
    os.chmod(lib, 0o755)
    os.chown(exe, 0, 0)
    os.chmod(exe, 0o4755)
    os.mkdir(out)
    os.chmod(out, 0o1777)
    env = {"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "2", "OMP_TOOL_LIBRARIES": lib, "GPUTOOL_OUTPUT": out}
    p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", exe, "--secure"],
                       env=env, capture_output=True, text=True, timeout=60)
    if "secure 1" not in p.stdout:
        print("  (skipped: setuid has no effect here: %r)" % p.stdout)
        return
    check(p.returncode == 0 and p.stdout.endswith("team ran\n"), "exit %d, stdout %r" % (p.returncode, p.stdout))
    check(os.listdir(out) == [], "files written by a setuid program: %s" % os.listdir(out))
    check(p.stderr.count("inactive in a setuid") == 1, "stderr %r" % p.stderr)


def test_run_rejects_a_file():
    """`gputool run -o FILE` with FILE a file: refused before the program
    starts (it would run, and its profile be lost)."""
    d = tempfile.mkdtemp(prefix="gputool-safe-")
    target, marker = os.path.join(d, "afile"), os.path.join(d, "ran")
    open(target, "w").close()
    p = subprocess.run([os.path.join(BUILD, "gputool"), "run", "-o", target, "--", "/usr/bin/touch", marker],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 125 and "Not a directory" in p.stderr, "gputool run: %d %r" % (p.returncode, p.stderr))
    check(not os.path.exists(marker), "the program ran")


def test_exec():
    """A program that ends by exec'ing another, under `gputool run`: its
    profile is written before the exec; the child it forked and that
    exec'd at once, and the program exec'd, write none."""
    if os.environ.get("GT_SANITIZER_BUILD"):
        # The preloaded sanitizer build of the library cannot load into the
        # uninstrumented programs exec'd (/bin/true, /bin/echo).
        print("  (skipped in a sanitizer build)")
        return
    d = tempfile.mkdtemp(prefix="gputool-exec-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUTOOL_") and k != "OMP_TOOL_LIBRARIES"}
    env["OMP_NUM_THREADS"] = "2"
    p = subprocess.run([os.path.join(BUILD, "gputool"), "run", "-o", d, "--",
                        os.path.join(BUILD, "tests", "e2e", "exec_after")], env=env,
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0 and p.stdout == "after exec\n", "exit %d, stdout %r, stderr %r" % (p.returncode, p.stdout, p.stderr))
    profs = [n for n in os.listdir(d) if n.endswith(".gtprof")]
    check(len(profs) == 1 and profs[0].startswith("exec_after-"), "profiles: %s" % os.listdir(d))
    r = subprocess.run([os.path.join(BUILD, "gputool"), "report", os.path.join(d, profs[0]), "--format", "json"],
                       capture_output=True, text=True)
    check(r.returncode == 0 and '"burn"' in r.stdout, "burn() not in the profile: %s" % r.stderr)


main([("planted links", test_planted_links), ("a program that execs", test_exec), ("gputool run -o a file", test_run_rejects_a_file), ("a setuid program", test_setuid), ("report reads regular files only", test_report_reads_files_only), ("refused directories", test_refused_directories),
      ("a relative directory after chdir", test_relative_after_chdir)])
