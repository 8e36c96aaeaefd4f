#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The HTML report in headless Chromium: every tab of the page renders,
with no script error, and shows the run's total; a page beside it opens the
report in a frame and clicks through it (open, open below, close).

Usage: check_html.py GPUTOOL [--run DIR]   (DIR: a run of its own to click through)

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
import check_page  # noqa: E402

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
        # A chain to open and close: main > outer_fn > middle_fn > inner_fn.
        o = p.frame(m, "outer_fn", line=20)
        p.value(p.frame(o, "side_fn", line=30), 0, "CPUTIME", 10000)
        p.value(p.frame(p.frame(o, "middle_fn", line=21), "inner_fn", line=22), 0, "CPUTIME", 20000)
        for i in range(300):  # a wide level
            p.value(p.frame(m, "leaf%d" % i, line=100 + i), 1, "CPUTIME", 1000 + i)
        p.write(os.path.join(d, "app-%d-%d.gtprof" % (r, 10 + r)))


# The page's metric selector after the clicks, with each metric's total
# over both ranks (make_run): CPUTIME, GKER, then all GPU operations.
EXPECT = "CPUTIME=%d GKER=4000000 GPUOP=4000000" % (7000000 + 14000000 + 2 * (3000000 + 30000) +
                                                      2 * sum(1000 + i for i in range(300)))

# Opens the report in a frame and clicks: in the top-down tree it opens
# outer_fn, then middle_fn under it, then closes outer_fn; in the bottom-up
# view it opens inner_fn, then its caller middle_fn, then closes inner_fn.
# Every row opened below a closed row must be gone. In the flame graph it
# zooms into a frame and out again; then it shows every tab on every metric
# of the page's selector: no script error, and each metric's total.
CLICKS = """<!doctype html><html><body><div id="result" data-status="pending">pending</div>
<iframe id="f" src="report.html#top-down" width="1200" height="800"></iframe>
<script>
function done(status, text) { var r = document.getElementById("result"); r.dataset.status = status; r.textContent = text; }
function rows(doc) { return Array.prototype.slice.call(doc.querySelectorAll("#view tr")); }
function find(doc, text) {
  return rows(doc).filter(function (tr) { var c = tr.querySelector("td.ctx"); return c && c.textContent.indexOf(text) >= 0; })[0];
}
function click(tr, what) {
  if (!tr) throw new Error("no row " + what);
  tr.querySelector(".tog").dispatchEvent(new MouseEvent("click", { bubbles: true }));
}
function tab(doc, name) {
  var b = Array.prototype.slice.call(doc.querySelectorAll("#tabs button")).filter(function (x) { return x.textContent === name; })[0];
  if (!b) throw new Error("no tab " + name);
  b.click();
}
function at(doc, cv, x, y) {
  var b = cv.getBoundingClientRect();
  cv.dispatchEvent(new MouseEvent("click", { bubbles: true, clientX: b.left + x, clientY: b.top + y }));
}
function check(doc, opened, gone) {
  opened.forEach(function (t) { if (!find(doc, t)) throw new Error(t + " did not open"); });
  return function () { gone.forEach(function (t) { if (find(doc, t)) throw new Error(t + " stayed after its ancestor closed"); }); };
}
document.getElementById("f").addEventListener("load", function () {
  try {
    var doc = document.getElementById("f").contentDocument, n0, after;
    if (doc.getElementById("gt-status").dataset.status !== "ok") throw new Error("the page did not render");
    if (!SPECIFIC) { everyTab(doc); done("ok", "clicked"); return; }
    n0 = rows(doc).length;
    click(find(doc, "outer_fn"), "outer_fn");
    click(find(doc, "middle_fn"), "middle_fn");
    after = check(doc, ["inner_fn", "side_fn"], ["middle_fn", "inner_fn", "side_fn"]);
    click(find(doc, "outer_fn"), "outer_fn");
    after();
    if (rows(doc).length !== n0) throw new Error("top-down: " + rows(doc).length + " rows after closing, " + n0 + " before");
    tab(doc, "Bottom-up");
    n0 = rows(doc).length;
    click(find(doc, "inner_fn"), "inner_fn");
    click(find(doc, "< middle_fn"), "< middle_fn");
    after = check(doc, ["< outer_fn"], ["< middle_fn", "< outer_fn"]);
    click(find(doc, "inner_fn"), "inner_fn");
    after();
    if (rows(doc).length !== n0) throw new Error("bottom-up: " + rows(doc).length + " rows after closing, " + n0 + " before");
    tab(doc, "Flame graph");
    // Zoom: the widest frame two levels up (work, by CPU time) fills the
    // graph; a click on the bottom bar (the focus) zooms out to its parent.
    var cv = doc.querySelector("#flame canvas"), H = cv.getBoundingClientRect().height;
    if (cv.dataset.focus !== "<program>") throw new Error("flame: focus " + cv.dataset.focus + " at first");
    at(doc, cv, 3, H - 2 * 18 - 9);
    if (cv.dataset.focus.indexOf("work") !== 0) throw new Error("flame: a click on work zoomed into " + cv.dataset.focus);
    cv = doc.querySelector("#flame canvas");
    at(doc, cv, 3, cv.getBoundingClientRect().height - 9);
    if (cv.dataset.focus.indexOf("main") !== 0) throw new Error("flame: the bottom bar zoomed out to " + cv.dataset.focus);
    everyTab(doc);
    done("ok", "clicked");
  } catch (e) { done("error", String(e.message || e)); }
});
// Every tab on every metric, switched with the page's own selector: no
// script error, and each metric's total as EXPECT says.
function everyTab(doc) {
    var sel = doc.getElementById("metric"), seen = [];
    Array.prototype.slice.call(sel.options).forEach(function (o) {
      sel.value = o.value;
      sel.dispatchEvent(new Event("change"));
      ["Top-down", "Flame graph", "Bottom-up", "Flat", "Processes"].forEach(function (t) {
        tab(doc, t);
        if (doc.getElementById("gt-status").dataset.status === "error") throw new Error(o.value + " " + t + ": " + doc.getElementById("gt-status").textContent);
      });
      seen.push(o.value + "=" + doc.getElementById("gt-status").dataset.total);
    });
    if (seen.join(" ") !== EXPECT) throw new Error("metrics and totals: " + seen.join(" "));
}
</script></body></html>
"""


def clicks(chrome, tmp, page, expect=EXPECT, specific=True):
    """The CLICKS page beside the report, in Chromium: its result. Not
    specific (another run than make_run's): only every tab on every metric."""
    wrapper = os.path.join(os.path.dirname(page), "clicks.html")
    with open(wrapper, "w") as f:
        f.write(CLICKS.replace("EXPECT", json.dumps(expect)).replace("SPECIFIC", "true" if specific else "false"))
    r = subprocess.run([chrome, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                        "--disable-component-update", "--no-first-run", "--disable-dev-shm-usage",
                        "--allow-file-access-from-files", "--user-data-dir=" + os.path.join(tmp, "p-clicks"),
                        "--enable-logging=stderr", "--v=0", "--virtual-time-budget=10000", "--dump-dom",
                        "file://" + wrapper], capture_output=True, text=True, timeout=120)
    m = re.search(r'id="result"[^>]*data-status="(\w+)"[^>]*>([^<]*)<', r.stdout)
    console = [l for l in r.stderr.splitlines() if "Uncaught" in l]
    return (m.group(1), m.group(2)) if m else ("none", "no result (exit %d)" % r.returncode), console


def expected(d):
    """The page's metric selector with each metric's total, from the JSON."""
    doc = json.loads(subprocess.run([GPUTOOL, "report", d, "--format", "json"], capture_output=True,
                                    text=True, check=True).stdout)
    seen = ["%s=%d" % (m["name"], m["total"]) for m in doc["metrics"]]
    if doc["importance"]["G_P"] > 0:
        seen.append("GPUOP=%d" % doc["importance"]["G_P"])
    return " ".join(seen)


def check_run(chrome, d):
    """--run DIR: the page of a run made elsewhere (a real MPI job), every
    tab on every metric."""
    tmp = tempfile.mkdtemp(prefix="gt-html-")
    page = os.path.join(tmp, "report.html")
    subprocess.run([GPUTOOL, "report", d, "--format", "html", "-o", page], check=True)
    want = expected(d)
    (status, text), console = clicks(chrome, tmp, page, want, specific=False)
    if status != "ok" or console:
        print("FAIL every tab on every metric of %s: %s %s %s" % (d, status, text, console[:3]))
        sys.exit(1)
    shutil.rmtree(tmp)
    print("check_html: every tab on every metric of %s: ok (%s)" % (d, want))


def main():
    chrome = browser()
    if not chrome:
        print("no Chromium: skipped (scripts/install-deps.sh installs it)")
        sys.exit(77)
    if len(sys.argv) > 3 and sys.argv[2] == "--run":
        check_run(chrome, sys.argv[3])
        return
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
    # What to do next: a run with pageable and pinned copies has advice,
    # and its tab shows it (first among the tabs, with what to try).
    a = os.path.join(tmp, "advice")
    os.mkdir(a)
    p = gtfiles.Profile({"exe": "/bin/app", "wall_ns": "1000000000"})
    m = p.frame(0, "main", line=3)
    for fn, t, pageable in (("upload", 40000000, 1), ("upload_pinned", 10000000, 0)):
        c = p.ph(p.frame(m, fn, line=4), "<gpu copy h2d>")
        p.value(c, 0, "GXCOPY_H2D", t)
        p.value(c, 0, "GXCOPY_H2D_BYTES", 400000000)
        if pageable:
            p.value(c, 0, "GXCOPY_PAGEABLE_BYTES", 400000000)
    p.write(os.path.join(a, "app-0-1.gtprof"))
    src = os.path.join(tmp, "report-advice.html")
    subprocess.run([GPUTOOL, "report", a, "--format", "html", "-o", src], check=True)
    r = subprocess.run([chrome, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                        "--disable-component-update", "--no-first-run", "--user-data-dir=" + os.path.join(tmp, "p-adv"),
                        "--virtual-time-budget=5000", "--dump-dom", "file://" + src + "#advice"],
                       capture_output=True, text=True, timeout=120)
    tabs = re.findall(r"<button[^>]*>([^<]*)</button>", r.stdout)
    if ('data-status="ok"' not in r.stdout or "rendered advice" not in r.stdout or tabs[:1] != ["What to do next"]
            or "copies of pageable host memory" not in r.stdout or "try: pin the host buffer" not in r.stdout
            or "4.00x" not in r.stdout or "1.031x" not in r.stdout):
        failed += 1
        print("FAIL what to do next: the tab (tabs %s) does not show the pageable copies' advice" % tabs)
    else:
        print("ok   what to do next: its tab first, the pageable copies' advice with the program's estimate")
    # ...and the summary's first piece of advice is in the first screen.
    try:
        fs = check_page.probe(chrome, src, tmp, "advice")
        first = fs["next_first"] or ""
        ok = first.startswith("1. ") and "pageable host memory" in first and fs["next_bottom"] <= check_page.HEIGHT
    except AssertionError as e:
        ok, first = False, str(e)
    if not ok:
        failed += 1
        print("FAIL what to do next in the summary: %r" % first)
    else:
        print("ok   what to do next in the summary: %r" % first[:70])
    # The first screen of a GPU-bound run: it opens on the GPU operations'
    # tree (GPUOP), with "What to do next" and the tabs in view, and the
    # file:line of a row whose function has a name wider than the window
    # stays in view (the name gives way, whole in its title).
    g = os.path.join(tmp, "gpu-bound")
    os.mkdir(g)
    p = gtfiles.Profile({"exe": "/bin/app", "wall_ns": "1000000000"})
    m = p.frame(0, "main", line=3)
    p.value(p.frame(m, "setup", line=4), 0, "CPUTIME", 5000000)
    longname = "ns::Solver<double, std::allocator<double> >::step(" + ", ".join(["double*"] * 60) + ") const"
    ident = "update_" + "_".join(["the_field_of_every_element"] * 12)  # no signature to collapse
    k = p.node(p.ph(p.frame(p.frame(m, longname, line=1234), ident, line=77), "<gpu kernel>"), gtfiles.NAME, "axpy")
    p.value(k, 0, "GKER", 100000000)
    p.write(os.path.join(g, "app-0-1.gtprof"))
    src = os.path.join(tmp, "report-gpu-bound.html")
    subprocess.run([GPUTOOL, "report", g, "--format", "html", "-o", src], check=True)
    try:
        fs = check_page.probe(chrome, src, tmp, "gpu-bound")
        bad = check_page.first_screen_problems(fs, "GPUOP")
        if not any(l["text"] == "app.c:1234" and l["title"].startswith(longname) for l in fs["locs"]):
            bad.append("no app.c:1234 in view with the whole name in its title: %r" % fs["locs"])
        if not any(l["text"] == "app.c:77" and l["title"].startswith(ident) for l in fs["locs"]) or fs["cut"] < 1:
            bad.append("no app.c:77 in view beside its cut name (%d cut): %r" % (fs["cut"], fs["locs"]))
    except AssertionError as e:
        bad = [str(e)]
    if bad:
        failed += 1
        print("FAIL first screen of a GPU-bound run: %s" % "; ".join(bad))
    else:
        print("ok   first screen of a GPU-bound run: GPUOP's tree, %r, tabs end at %.0f px, app.c:1234 and app.c:77 in view"
              % (fs["next_first"][:50], fs["tabs_bottom"]))
    (status, text), console = clicks(chrome, tmp, page)
    if status != "ok" or console:
        failed += 1
        print("FAIL clicks (open, open below, close; tabs): %s %s %s" % (status, text, console[:3]))
    else:
        print("ok   clicks: rows opened below a closed row go with it (top-down, bottom-up); flame zoom in and out; every tab on every metric")
    if failed:
        print("check_html: %d failures (files in %s)" % (failed, tmp))
        sys.exit(1)
    shutil.rmtree(tmp)
    print("check_html: ok")


main()
