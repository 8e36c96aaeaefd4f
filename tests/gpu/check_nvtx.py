# SPDX-License-Identifier: MIT
"""samples/cuda/nvtx under the tool (CUDA injection + NVTX): the kernels
launched inside each NVTX range hang under the range's node, in the counts
the program launched, and stdout and the exit status are the program's own.

Usage: check_nvtx.py LIBGPUTOOL GPUTOOL SAMPLE"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from gtrun import check, main, one_profile, run  # noqa: E402

LIB, GPUTOOL, EXE = (os.path.abspath(a) for a in sys.argv[1:4])
# label -> (path from the root, kernels launched in it and not in a range nested in it)
RANGES = {
    '<nvtx "init">': (["main", '<nvtx "init">'], {"fill": 2}),
    '<nvtx "iterate">': (["main", "iterate", '<nvtx "iterate">'], {"axpy": 40}),
    # half() inlined into iterate() is iterate's own code, which a range's
    # node holds itself: the inner range then hangs right under the outer.
    '<nvtx "half">': ([["main", "iterate", '<nvtx "iterate">', "half", '<nvtx "half">'],
                       ["main", "iterate", '<nvtx "iterate">', '<nvtx "half">']], {"axpy": 20}),
    '<nvtx model "store">': (["main", '<nvtx model "store">'], {"fill": 1}),
}


def kernels_under(p, node):
    """{kernel name: GKER_COUNT} of the kernels under node, not under a range nested in it."""
    out, todo = {}, list(p.children.get(node["id"], []))
    while todo:
        n = todo.pop()
        if (n.get("name") or "").startswith("<nvtx"):
            continue
        if n.get("parent") is not None and p.nodes[n["parent"]].get("name") == "<gpu kernel>":
            name = (n.get("name") or "?").split("(")[0]  # without the parameters
            out[name] = out.get(name, 0) + p.incl(n, "GKER_COUNT")
            continue
        todo.extend(p.children.get(n["id"], []))
    return out


def test_kernels_under_ranges():
    code0, out0, _ = run([EXE])
    outdir = tempfile.mkdtemp(prefix="gputool-nvtx-")
    code1, out1, err1 = run([EXE], env={"CUDA_INJECTION64_PATH": LIB, "NVTX_INJECTION64_PATH": LIB,
                                        "GPUTOOL_OUTPUT": outdir})
    check(code0 == code1 == 0, "exit status %d bare, %d under the tool: %s" % (code0, code1, err1))
    check(out0 == out1, "stdout changed: %r vs %r" % (out0, out1))
    p = one_profile(GPUTOOL, outdir)
    for label, (path, want) in RANGES.items():
        got = p.find(label)
        check(len(got) == 1, "%s: %d nodes" % (label, len(got)))
        names = [x.split("(")[0] for x in p.names(got[0])]
        paths = path if isinstance(path[0], list) else [path]
        check(names in paths, "%s at %s, expected %s" % (label, " > ".join(names), " or ".join(" > ".join(x) for x in paths)))
        kernels = {k: v for k, v in kernels_under(p, got[0]).items() if k in want}
        print("  %-24s kernels %s" % (label, kernels))
        check(kernels == want, "%s: kernels %s, expected %s" % (label, kernels, want))


if __name__ == "__main__":
    main([("kernels_under_ranges", test_kernels_under_ranges)])
