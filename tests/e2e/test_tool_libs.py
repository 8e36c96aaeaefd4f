# SPDX-License-Identifier: MIT
"""CPU time in a vendor's measurement library is the tool's: tool_libs
spends as much CPU in its own app_burn() as in gt_shim_burn() of
libnvperf_host-gtshim.so (named as CUPTI's PC-sampling host library). The
profile must hold app_burn()'s time, and no frame of that library; its time
counts as the tool's samples (the report's "in gputool itself").
Usage: test_tool_libs.py BUILD_DIR TOOL_LIBS

Times are checked against what the program measured itself, with the margin
test_preload.py uses, so that the test holds on a busy machine."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from gtrun import check, main, one_profile, run  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
EXE = os.path.abspath(sys.argv[2])
GPUTOOL = os.path.join(BUILD, "gputool")
REL = 0.25


def own_times(err):
    lines = [l for l in err.splitlines() if l.startswith("tool_libs times: ")]
    check(len(lines) == 1, "expected one 'tool_libs times' line on stderr, got %r" % err)
    w = lines[0].split()[2:]
    return {w[i]: int(w[i + 1]) for i in range(0, len(w) - 1, 2)}


def test_tool_library_time():
    import tempfile
    outdir = tempfile.mkdtemp(prefix="gputool-e2e-toollibs-")
    code, out, err = run([GPUTOOL, "run", "-o", outdir, "--", EXE, "0.3"], unset=("LD_PRELOAD",))
    check(code == 0 and out == "tool_libs: done\n", "exit %d, stdout %r: %s" % (code, out, err))
    own = own_times(err)
    p = one_profile(GPUTOOL, outdir)
    period = 1e9 / int(p.meta("sample_hz"))
    mods = p.doc.get("modules", [])
    shim = [n for n in p.doc["nodes"] if n.get("module") is not None and
            os.path.basename(mods[n["module"]]).startswith("libnvperf_host")]
    check(not shim, "frames of the measurement library in the tree: %s" %
          ["/".join(p.names(n)) for n in shim])
    app = sum(p.incl(n, "CPUTIME") for n in p.find("app_burn"))
    tool_ns = int(p.meta("tool_samples") or 0) * period
    print("  app_burn sampled %.1f ms, measured %.1f ms; the tool's samples %.1f ms, the library's time "
          "measured %.1f ms" % (app / 1e6, own["app_ns"] / 1e6, tool_ns / 1e6, own["tool_ns"] / 1e6))
    check(abs(app - own["app_ns"]) <= REL * own["app_ns"], "app_burn: %.1f ms sampled, %.1f ms measured" %
          (app / 1e6, own["app_ns"] / 1e6))
    check(abs(tool_ns - own["tool_ns"]) <= REL * own["tool_ns"],
          "the library's time as the tool's: %.1f ms, %.1f ms measured" % (tool_ns / 1e6, own["tool_ns"] / 1e6))
    # Nothing of it left in the program's tree.
    check(p.total("CPUTIME") <= own["total_ns"] - own["tool_ns"] * (1 - REL),
          "%.1f ms in the tree, the program's own at most %.1f ms" %
          (p.total("CPUTIME") / 1e6, (own["total_ns"] - own["tool_ns"] * (1 - REL)) / 1e6))


if __name__ == "__main__":
    main([("tool library time", test_tool_library_time)])
