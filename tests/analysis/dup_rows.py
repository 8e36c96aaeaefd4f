#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Rows of a text report that read the same, and lines wider than the width.

Usage: dup_rows.py REPORT.txt [--width N]   (exit 1 when something is found)
As a module: dup_rows.duplicates(text) -> [(section, row text, [line numbers])],
dup_rows.too_wide(text, width) -> [(line number, length)].

A report is sections (a line at column 0 opens one); a section holds tables,
and a line that is neither a row nor part of one (a heading, a legend) ends a
table. A row starts with a line whose first field is a number (a value, a
percentage, "7."); the lines after it indented deeper (its context, its
body, its wrapped words) belong to it. Two rows read the same when their
texts agree once the numbers that are values are taken out; numbers that
name something (file:line, .omp_outlined.27) stay. In a tree (rows whose
label starts at different columns) a row is its label under its ancestors'
labels: the same label under two parents is two places, twice under one
parent is one place shown twice."""
import re
import sys

# A value: a number not glued to a name or a line number before it.
VALUE = re.compile(r"(?<![:\w.])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?:%|x)?(?![\w])")
FIRST_VALUE = re.compile(r"^\s*(?:[-+]?\d+(?:\.\d+)?(?:%|x)?\.?|-)(?=\s|$)")
# Columns of values in front of a row's label.
LEAD = re.compile(r"^(\s*(?:(?:[-+]?\d+(?:\.\d+)?(?:%|x|s)?\.?|-)\s+)*)")


def _indent(line):
    return len(line) - len(line.lstrip(" "))


def _sections(lines):
    title, body = None, []
    for n, line in enumerate(lines, 1):
        if line and not line.startswith(" "):
            if title is not None:
                yield title, body
            title, body = line, []
        elif title is not None:
            body.append((n, line))
    if title is not None:
        yield title, body


def _tables(body):
    """Rows of each table: [(line number, first line, [later lines])]."""
    table, row = [], None
    for n, line in body:
        if not line.strip():
            if row:
                table.append(row)
            row = None
            if table:
                yield table
            table = []
            continue
        if FIRST_VALUE.match(line):
            if row:
                table.append(row)
            row = (n, line, [])
        elif row and _indent(line) > _indent(row[1]):
            row[2].append(line)
        else:
            if row:
                table.append(row)
            row = None
            if table:
                yield table
            table = []
    if row:
        table.append(row)
    if table:
        yield table


# "(2 of 3 contexts)": the report's own count telling rows apart whose
# names were cut to the same text; it names the row, it is not a value.
NTH = re.compile(r"\((\d+) of (\d+) contexts\)")


def _text(s):
    s = NTH.sub(lambda m: "(context_%s_of_%s)" % (m.group(1), m.group(2)), s)
    return " ".join(VALUE.sub("", s).split())


def duplicates(text):
    found = []
    for title, body in _sections(text.splitlines()):
        for table in _tables(body):
            starts = {len(LEAD.match(r[1]).group(1)) for r in table}
            tree = len(starts) > 1 and all(not r[2] for r in table)
            seen, stack = {}, []
            for n, first, rest in table:
                if tree:
                    col = len(LEAD.match(first).group(1))
                    while stack and stack[-1][0] >= col:
                        stack.pop()
                    label = first[col:].strip()
                    key = " / ".join([s[1] for s in stack] + [label])
                    stack.append((col, label))
                else:
                    key = _text(" ".join([first] + rest))
                seen.setdefault(key, []).append(n)
            for key, ns in seen.items():
                if len(ns) > 1:
                    found.append((title, key, ns))
    return found


def too_wide(text, width):
    return [(n, len(l)) for n, l in enumerate(text.splitlines(), 1) if len(l) > width]


def main():
    args = sys.argv[1:]
    width = None
    if "--width" in args:
        i = args.index("--width")
        width = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 1:
        sys.exit(__doc__)
    with open(args[0], encoding="utf-8") as f:
        text = f.read()
    bad = 0
    for title, key, ns in duplicates(text):
        bad += 1
        print("SAME %s\n  lines %s: %s" % (title.split("(")[0].strip(), ", ".join(map(str, ns)), key[:300]))
    if width:
        for n, length in too_wide(text, width):
            bad += 1
            print("WIDE line %d: %d > %d" % (n, length, width))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
