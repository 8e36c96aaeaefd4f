# SPDX-License-Identifier: MIT
"""The CUDA backend on a machine without a usable driver: it says once that
it is off, and everything else runs. Usage: test_nodriver.py BUILD_DIR"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from gtrun import check, main, profiles, run  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
LIB = os.path.join(BUILD, "libgputool.so")
GPUTOOL = os.path.join(BUILD, "gputool")
NODRIVER = os.path.join(BUILD, "tests", "cupti", "nodriver")
FAKE_CUDA = os.path.join(BUILD, "tests", "cupti", "fake-cuda", "libcuda.so.1")
SITES = os.path.join(BUILD, "samples", "openacc", "sites")
# Sanitizer builds: the gcc-built sample is not instrumented, the tool is;
# the sanitizer runtime comes preloaded for it.
BASE = {"LD_PRELOAD": os.environ["GT_TARGET_PRELOAD"]} if os.environ.get("GT_TARGET_PRELOAD") else {}


def tool_lines(err, subsys):
    return [l for l in err.splitlines() if l.startswith("gputool[%s]" % subsys)]


def test_injection_without_driver():
    """What the driver would do with CUDA_INJECTION64_PATH, with no libcuda."""
    outdir = tempfile.mkdtemp(prefix="gputool-cupti-")
    code, out, err = run([NODRIVER, LIB], env={"GPUTOOL_OUTPUT": outdir})
    check(code == 0, "exit code %d: %s" % (code, err))
    check("InitializeInjection: 0" in out and "done" in out, "stdout: %r" % out)
    lines = tool_lines(err, "cupti")
    check(len(lines) == 1 and "off (no CUDA driver" in lines[0], "stderr: %r" % err)
    check(len(profiles(GPUTOOL, outdir)) == 1, "no profile written")


def test_openacc_with_driver_but_no_device():
    """An OpenACC program whose runtime loaded a driver that has no device:
    the CUDA backend is off (cuInit), the OpenACC measurements are there."""
    outdir = tempfile.mkdtemp(prefix="gputool-cupti-")
    code0, out0, _ = run([SITES])
    code, out, err = run([SITES], env={**BASE, "ACC_PROFLIB": LIB, "GPUTOOL_OUTPUT": outdir,
                                       "LD_PRELOAD": " ".join(filter(None, [BASE.get("LD_PRELOAD"), FAKE_CUDA]))})
    check(code == code0 == 0 and out == out0, "exit code or output changed: %r" % err)
    lines = tool_lines(err, "cupti")
    check(len(lines) == 1 and "off (cuInit: no CUDA-capable device" in lines[0],
          "stderr: %r" % err)
    p = profiles(GPUTOOL, outdir)[0]
    check(sum(p.excl(n, "ACC_COUNT") for n in p.find("<acc compute>")) == 40,
          "OpenACC constructs not measured")


def test_not_attached_without_cuda():
    """A program that never loads CUDA: the backend says nothing."""
    outdir = tempfile.mkdtemp(prefix="gputool-cupti-")
    code, _, err = run([SITES], env={**BASE, "ACC_PROFLIB": LIB, "GPUTOOL_OUTPUT": outdir})
    check(code == 0 and not tool_lines(err, "cupti"), "stderr: %r" % err)


main([("injection without a driver: one line, the program runs", test_injection_without_driver),
      ("a driver without a device: one line, OpenACC measured", test_openacc_with_driver_but_no_device),
      ("no CUDA in the program: silent", test_not_attached_without_cuda)])
