#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The HTML report's first screen, as a user sees it at 1400x1000 in
headless Chromium, for programs run under the tool: the OpenMP sample
samples/omp-host/split and, when its sources are given, LULESH 2.0.

Usage: check_page.py GPUTOOL BUILD_DIR [--lulesh SRC_DIR]

For each program: `gputool run`, `gputool report --format html`, then the
page with a probe script appended (probe()): it must open on the answer --
the summary with "What to do next" (advice or the "No advice applies" line)
and the tabs inside the first screen, the tab bar's active view the top-down
tree on the metric of the side the run is bound by (JSON importance.bound),
no sideways scrolling, and every file:line of a tree row in the first screen
inside the window however long its function's name. A screenshot of the
first screen goes to BUILD_DIR/page-<program>.png (docs/img/ holds copies).
Exit 77 (skipped) without Chromium."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

WIDTH, HEIGHT = 1400, 1000

# Appended to the page after its own script: measures the first screen
# and writes what it found, as JSON, into #probe for --dump-dom.
PROBE = """<pre id="probe">none</pre><script>
(function () { try {
  // The first screen of a screenshot at --window-size WxH; the window
  // --dump-dom lays out is as wide, and less high (headless browser chrome).
  var W = SIZE_W, H = SIZE_H, r = { window: [window.innerWidth, window.innerHeight] };
  var st = document.getElementById("gt-status");
  r.status = st.dataset.status + " " + st.textContent;
  r.metric = st.dataset.metric;
  r.tab = st.dataset.tab;
  var on = document.querySelector("#tabs button.on");
  r.active = on ? on.textContent : null;
  r.tabs = Array.prototype.map.call(document.querySelectorAll("#tabs button"), function (b) { return b.textContent; });
  r.tabs_bottom = document.getElementById("tabs").getBoundingClientRect().bottom;
  var s = document.getElementById("summary"), h2 = s.querySelector("h2");
  r.next_heading = h2 ? h2.textContent : null;
  var first = s.querySelector(".advice .line") || s.querySelector(".none");
  r.next_first = first ? first.textContent : null;
  r.next_bottom = first ? first.getBoundingClientRect().bottom : null;
  r.verdict = (s.querySelector(".verdict") || {}).textContent || null;
  r.scroll_width = document.documentElement.scrollWidth;
  var rows = Array.prototype.filter.call(document.querySelectorAll("#view tr"), function (tr) {
    var b = tr.getBoundingClientRect(); return b.height > 0 && b.top < H;
  });
  r.rows = rows.length;
  r.locs = []; r.cut = 0;
  rows.forEach(function (tr) {
    var nm = tr.querySelector(".cl .nm"), loc = tr.querySelector(".cl .loc");
    if (!nm) return;
    if (nm.scrollWidth > nm.clientWidth) r.cut++;
    if (!loc) return;
    var b = loc.getBoundingClientRect();
    r.locs.push({ text: loc.textContent, right: b.right, width: b.width, title: nm.title });
  });
  document.getElementById("probe").textContent = JSON.stringify(r);
} catch (e) { document.getElementById("probe").textContent = JSON.stringify({ error: String(e.message || e) }); } })();
</script>"""


def browser():
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chrome_cmd(chrome, tmp, tag):
    return [chrome, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--no-first-run", "--disable-dev-shm-usage", "--hide-scrollbars",
            "--user-data-dir=" + os.path.join(tmp, "profile-" + tag), "--window-size=%d,%d" % (WIDTH, HEIGHT),
            "--virtual-time-budget=5000"]


def probe(chrome, page, tmp, tag="probe"):
    """What the first screen of page shows (PROBE's JSON), or raises."""
    with open(page) as f:
        html = f.read()
    probed = os.path.join(tmp, "probed-%s.html" % tag)
    with open(probed, "w") as f:
        f.write(html.replace("</body>", PROBE.replace("SIZE_W", str(WIDTH)).replace("SIZE_H", str(HEIGHT)) + "\n</body>"))
    r = subprocess.run(chrome_cmd(chrome, tmp, tag) + ["--dump-dom", "file://" + probed],
                       capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="probe">([^<]*)</pre>', r.stdout)
    if not m or m.group(1) == "none":
        raise AssertionError("the probe did not run (exit %d): %s" % (r.returncode, r.stderr[-500:]))
    p = json.loads(m.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&"))
    if "error" in p:
        raise AssertionError("the page's first screen could not be read: " + p["error"])
    return p


def first_screen_problems(p, metric):
    """What a user would stumble on in probe()'s p, the page expected to
    open on metric's top-down tree."""
    bad = []
    if not p["status"].startswith("ok"):
        bad.append("status " + p["status"])
    if p["window"][0] != WIDTH:
        bad.append("window %r" % p["window"])
    if p["active"] != "Top-down" or p["tab"] != "top-down":
        bad.append("opens on %r (%s), not the top-down tree" % (p["active"], p["tab"]))
    if p["metric"] != metric:
        bad.append("opens on metric %s, not %s (the bound's)" % (p["metric"], metric))
    if p["next_heading"] != "What to do next" or not p["next_first"]:
        bad.append("no advice and no 'No advice applies' line in the summary")
    elif p["next_bottom"] > HEIGHT:
        bad.append("the advice's first line ends at %.0f px, below the first screen" % p["next_bottom"])
    if p["tabs_bottom"] > HEIGHT / 2:
        bad.append("the tabs end at %.0f px, not in the top half of the first screen" % p["tabs_bottom"])
    if p["scroll_width"] > WIDTH:
        bad.append("the page scrolls sideways (%d px wide)" % p["scroll_width"])
    if not p["locs"]:
        bad.append("no file:line in the first screen's rows")
    for loc in p["locs"]:
        if loc["right"] > WIDTH or loc["width"] <= 0:
            bad.append("%s pushed off-screen (right %.0f) by %r" % (loc["text"], loc["right"], loc["title"][:80]))
        if not re.match(r"^[^:]+:\d+$", loc["text"]):
            bad.append("location %r is not file:line" % loc["text"])
    return bad


def screenshot(chrome, page, tmp, png):
    subprocess.run(chrome_cmd(chrome, tmp, "shot") + ["--screenshot=" + png, "file://" + page],
                   capture_output=True, timeout=120)
    return os.path.exists(png) and os.path.getsize(png) > 0


def report(gputool, run_dir, tmp, name):
    page = os.path.join(tmp, name + ".html")
    subprocess.run([gputool, "report", run_dir, "--format", "html", "-o", page], check=True)
    doc = json.loads(subprocess.run([gputool, "report", run_dir, "--format", "json"], check=True,
                                    capture_output=True, text=True).stdout)
    im = doc["importance"]
    return page, doc, ("GPUOP" if im["bound"] == "gpu" else doc["metric"])


def run_tool(gputool, out, cmd, cwd=None):
    env = dict(os.environ, OMP_NUM_THREADS="2")
    env.pop("LD_LIBRARY_PATH", None)
    r = subprocess.run([gputool, "run", "-o", out, "--"] + cmd, cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=600)
    if r.returncode:
        raise AssertionError("%s under the tool: exit %d: %s" % (cmd[0], r.returncode, r.stderr[-800:]))


def lulesh(src, build, gputool, tmp):
    """LULESH 2.0 built from src into build/page-lulesh and run (-s 15 -i 30)."""
    exe_dir = os.path.join(build, "page-lulesh")
    exe = os.path.join(exe_dir, "lulesh2.0")
    srcs = sorted(os.path.join(src, f) for f in os.listdir(src) if re.match(r"lulesh.*\.cc$", f))
    os.makedirs(exe_dir, exist_ok=True)
    if not os.path.exists(exe) or any(os.path.getmtime(s) > os.path.getmtime(exe) for s in srcs):
        cxx = shutil.which("clang++-19") or shutil.which("clang++")
        subprocess.run([cxx, "-O3", "-g", "-fopenmp", "-DUSE_MPI=0", "-I" + src] + srcs + ["-o", exe,
                        "-L/usr/lib/llvm-19/lib", "-Wl,-rpath,/usr/lib/llvm-19/lib"], check=True,
                       capture_output=True)
    out = os.path.join(tmp, "run-lulesh")
    run_tool(gputool, out, [exe, "-s", "15", "-i", "30"], cwd=tmp)
    return out


def main():
    chrome = browser()
    if not chrome:
        print("no Chromium: skipped (scripts/install-deps.sh installs it)")
        sys.exit(77)
    gputool, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    src = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--lulesh" else None
    tmp = tempfile.mkdtemp(prefix="gt-page-")
    programs = [("omp-split", None)]
    if src and os.path.isdir(src):
        programs.append(("lulesh", src))
    else:
        print("LULESH: skipped (no --lulesh SRC_DIR; cmake -DGT_LULESH_SRC=DIR names it)")
    failed = 0
    for name, where in programs:
        try:
            if where:
                out = lulesh(where, build, gputool, tmp)
            else:
                out = os.path.join(tmp, "run-" + name)
                run_tool(gputool, out, [os.path.join(build, "samples", "omp-host", "split")])
            page, doc, metric = report(gputool, out, tmp, name)
            p = probe(chrome, page, tmp, name)
            bad = first_screen_problems(p, metric)
            png = os.path.join(build, "page-%s.png" % name)
            if not screenshot(chrome, page, tmp, png):
                bad.append("no screenshot")
        except (AssertionError, subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
            bad = [str(e)]
        if bad:
            failed += 1
            print("FAIL %s: %s" % (name, "; ".join(bad)))
        else:
            print("ok   %s: opens on %s (%s-bound), advice %r, tabs end at %.0f px, %d file:line in view "
                  "(%d names cut); %s" % (name, metric, doc["importance"]["bound"], p["next_first"][:60],
                                          p["tabs_bottom"], len(p["locs"]), p["cut"], png))
    if failed:
        print("check_page: %d failures (files in %s)" % (failed, tmp))
        sys.exit(1)
    shutil.rmtree(tmp)
    print("check_page: ok")


if __name__ == "__main__":
    main()
