#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The HTML report in headless Chromium: every tab of the page renders,
with no script error, and shows the run's total.

Usage: check_html.py GPUTOOL

The page's script marks #gt-status with data-status="ok" after it has
drawn the tab named in the URL's fragment, or "error" with the message
when a script error happens; Chromium prints the DOM (--dump-dom) and its
console (--enable-logging=stderr). Exit 77 (skipped) without Chromium."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gtfiles  # noqa: E402

GPUTOOL = sys.argv[1]
TABS = ("top-down", "flame", "bottom-up", "flat", "processes")


def browser():
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def make_run(d):
    for r in range(2):
        p = gtfiles.Profile({"rank": str(r), "pid": str(10 + r), "exe": "/bin/app"}, threads=2)
        m = p.frame(0, "main", line=3)
        w = p.frame(m, "work <T>&\"x\"", line=5)
        p.value(w, 0, "CPUTIME", (r + 1) * 7000000)
        p.value(w, 1, "CPUTIME", 3000000)
        k = p.node(p.ph(p.frame(m, "solve", line=9), "<gpu kernel>"), gtfiles.NAME, "axpy</script>")
        p.value(k, 0, "GKER", 2000000)
        for i in range(300):  # a wide level
            p.value(p.frame(m, "leaf%d" % i, line=100 + i), 1, "CPUTIME", 1000 + i)
        p.write(os.path.join(d, "app-%d-%d.gtprof" % (r, 10 + r)))


def main():
    chrome = browser()
    if not chrome:
        print("no Chromium: skipped (scripts/install-deps.sh installs it)")
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="gt-html-")
    d = os.path.join(tmp, "run")
    os.mkdir(d)
    make_run(d)
    page = os.path.join(tmp, "report.html")
    p = subprocess.run([GPUTOOL, "report", d, "--format", "html", "-o", page], capture_output=True, text=True)
    if p.returncode:
        print("FAIL gputool report --format html: %s" % p.stderr)
        sys.exit(1)
    total = json.loads(subprocess.run([GPUTOOL, "report", d, "--format", "json"], capture_output=True,
                                      text=True).stdout)["metrics"][0]["total"]
    failed = 0
    for tab in TABS:
        for metric in ("", "GPUOP"):
            profile_dir = os.path.join(tmp, "profile-%s-%s" % (tab, metric))
            url = "file://%s#%s" % (page, tab)
            src = page
            if metric:  # the same page, opened on another metric
                src = os.path.join(tmp, "report-%s.html" % metric)
                subprocess.run([GPUTOOL, "report", d, "--format", "html", "--metric", metric, "-o", src], check=True)
                url = "file://%s#%s" % (src, tab)
            cmd = [chrome, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                   "--disable-component-update", "--no-first-run", "--disable-dev-shm-usage",
                   "--user-data-dir=" + profile_dir, "--enable-logging=stderr", "--v=0",
                   "--virtual-time-budget=5000", "--dump-dom", url]
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            except subprocess.TimeoutExpired:
                print("FAIL %s %s: Chromium did not finish" % (tab, metric))
                failed += 1
                continue
            m = re.search(r'id="gt-status"[^>]*data-status="(\w+)"[^>]*>([^<]*)<', r.stdout)
            m_total = re.search(r'id="gt-status"[^>]*data-total="(\d+)"', r.stdout)
            console = [l for l in r.stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l]
            problems = []
            if not m:
                problems.append("no status in the DOM (exit %d)" % r.returncode)
            elif m.group(1) != "ok":
                problems.append("status %s: %s" % (m.group(1), m.group(2)))
            if console:
                problems.append("console: %s" % console[:5])
            want = total if not metric else 4000000
            if not m_total or int(m_total.group(1)) != want:
                problems.append("total %s, expected %d" % (m_total.group(1) if m_total else None, want))
            if problems:
                failed += 1
                print("FAIL %s %s: %s" % (tab, metric or "(default metric)", "; ".join(problems)))
            else:
                print("ok   %s %s" % (tab, metric or ""))
            shutil.rmtree(profile_dir, ignore_errors=True)
    # --view chooses the tab the page opens on.
    src = os.path.join(tmp, "report-bu.html")
    subprocess.run([GPUTOOL, "report", d, "--format", "html", "--view", "bottom-up", "-o", src], check=True)
    r = subprocess.run([chrome, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                        "--disable-component-update", "--no-first-run", "--user-data-dir=" + os.path.join(tmp, "p-bu"),
                        "--virtual-time-budget=5000", "--dump-dom", "file://" + src],
                       capture_output=True, text=True, timeout=120)
    if 'data-status="ok"' not in r.stdout or "rendered bottom-up" not in r.stdout:
        failed += 1
        print("FAIL --view bottom-up: the page did not open on that tab")
    else:
        print("ok   --view bottom-up")
    if failed:
        print("check_html: %d failures (files in %s)" % (failed, tmp))
        sys.exit(1)
    shutil.rmtree(tmp)
    print("check_html: ok")


main()
