# SPDX-License-Identifier: MIT
"""Rows that read alike: a program whose two hot contexts differ only in the
middle (main > caller_a|caller_b > shared step > leaf). In every table of
the text report no two rows read the same, the rows of the regions and of
the CPU contexts name caller_a or caller_b, and no line is wider than
--width (or 160 when the report goes to a file).
Usage: test_paths.py BUILD_DIR"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "analysis"))
import dup_rows  # noqa: E402
from gtrun import check, main, run, run_gputool  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
GPUTOOL = os.path.join(BUILD, "gputool")
EXE = os.path.join(BUILD, "tests", "e2e", "middle_paths")
ENV = {"OMP_NUM_THREADS": "2"}


def sections(text):
    """{title: [row lines]}: a section opens at a line starting in column 0
    and holds its indented lines; a column header line is left out."""
    out, title = {}, None
    for line in text.splitlines():
        # The CPU section's "by function" list is a table of its own: a
        # function's row may read as a context's (a placeholder, e.g.).
        if (line and not line[0].isspace()) or (title and line.startswith("  by function")):
            title = line if not line[0].isspace() else title + " / " + line.strip()
            out[title] = []
        elif title and line.strip():
            out[title].append(line)
    return out


def rows_of(lines):
    # A row: its numbers, then its text; compare the text alone (the
    # numbers of two rows may well be equal, their contexts must not).
    rows = []
    for line in lines:
        m = re.match(r"^\s+(?:\[\d+\]\s+)?(?:[-\d.]+%?\s+)+(\S.*)$", line)
        if m:
            rows.append(m.group(1))
        elif line.strip().startswith(("body:", "bodies:", "kernel ")):
            continue  # under a row, what it ran: two contexts may run one body
        elif line.startswith("          ") or " > " in line or " < " in line:
            rows.append(line.strip())
    return rows


def report(width=None):
    outdir, _ = run_gputool(GPUTOOL, EXE, (), env=ENV)
    args = [GPUTOOL, "report", outdir] + (["--width", str(width)] if width else [])
    code, out, err = run(args)
    check(code == 0, "report: %s" % err)
    return out


def check_report(text, width):
    lines = text.splitlines()
    for n, length in dup_rows.too_wide(text, width):
        check(False, "a line over %d columns (%d): %r" % (width, length, lines[n - 1]))
    for title, row, at in dup_rows.duplicates(text):
        check(False, "two rows of %r read the same: %r (lines %s)" % (title, row, at))
    secs = sections(text)
    regions = [t for t in secs if t.startswith("OpenMP parallel regions")]
    check(regions, "no regions section:\n%s" % text)
    where = [ln.strip() for ln in secs[regions[0]] if "shared_middle" in ln and "caller_" in ln]
    check(len(where) == 2 and any("caller_a" in w for w in where) and any("caller_b" in w for w in where),
          "the regions' contexts do not name their callers: %s" % secs[regions[0]])
    cpu = [t for t in secs if t.startswith("CPU time by calling context")]
    check(cpu, "no CPU section")
    hot = [r for r in rows_of(secs[cpu[0]]) if "leaf_work" in r]
    check(len(hot) >= 2, "no two leaf rows: %s" % secs[cpu[0]])
    for r in hot[:2]:
        check("caller_a" in r or "caller_b" in r, "a leaf row lacks its caller: %r" % r)
        check(re.search(r"leaf_work \(middle_paths\.c:\d+\)", r), "a leaf row lacks its line: %r" % r)


def test_narrow():
    check_report(report(120), 120)


def test_default():
    check_report(report(), 160)


main([("rows at --width 120", test_narrow), ("rows at the default width", test_default)])
