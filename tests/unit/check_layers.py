# SPDX-License-Identifier: MIT
"""The layers point down only (docs/ARCHITECTURE.md, DESIGN.md §6): what each
folder may include, and that no programming-model layer names a vendor
backend, no backend names a layer, and nothing links through weak symbols.
Usage: check_layers.py SOURCE_DIR"""
import os
import re
import sys

SRC = os.path.abspath(sys.argv[1])
# folder -> the folders its files may include from
ALLOWED = {
    "channels": {"channels"},
    "core": {"core", "channels"},
    "gpu": {"core", "channels", "gpu"},
    "gpu/sass": {"core", "gpu/sass"},
    "gpu/cupti": {"core", "channels", "gpu", "gpu/cupti", "gpu/sass"},
    "gpu/opencl": {"core", "channels", "gpu", "gpu/opencl"},
    "ompt": {"core", "channels", "gpu", "ompt"},
    "acc": {"core", "channels", "gpu", "acc"},
    "report": {"core", "report"},
    "analysis": {"core", "report", "analysis"},
}
VENDORS = ("gpu/cupti", "gpu/opencl")
# Identifiers of a vendor backend and of a programming-model layer.
VENDOR_NAMES = re.compile(r"\b(gt_cupti\w*|gt_ocl\w*|InitializeInjection)\b")
LAYER_NAMES = re.compile(r"\b(gt_ompt\w*|ompt__\w+|gt_acc__\w+|acc__\w+)\b")
failures = []


def code_of(text):
    """The text without comments and string literals."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def main():
    n = 0
    for top in ALLOWED:
        path = os.path.join(SRC, top)
        for name in sorted(os.listdir(path)):
            if not name.endswith((".c", ".h")):
                continue
            rel = os.path.join(top, name)
            with open(os.path.join(SRC, rel), encoding="utf-8", errors="replace") as f:
                text = f.read()
            n += 1
            for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
                d = os.path.dirname(inc)
                if d and d not in ALLOWED[top]:
                    failures.append("%s includes %s (%s may include only %s)"
                                    % (rel, inc, top, ", ".join(sorted(ALLOWED[top]))))
            code = code_of(text)
            if "__attribute__((weak))" in code or "__weak__" in code:
                failures.append("%s declares a weak symbol" % rel)
            if top not in VENDORS:
                for m in sorted(set(VENDOR_NAMES.findall(code))):
                    failures.append("%s names the vendor backend's %s" % (rel, m))
            if top in VENDORS or top in ("core", "channels", "gpu", "gpu/sass"):
                for m in sorted(set(LAYER_NAMES.findall(code))):
                    failures.append("%s names the programming-model layer's %s" % (rel, m))
    for f in failures:
        print("FAIL " + f)
    print("%d files, %d failures" % (n, len(failures)))
    sys.exit(1 if failures or n < 20 else 0)


main()
