#!/usr/bin/env python3
"""Report tests: every built-in template on real traces (tests/data/kineto, tests/ranks/data)
gives Markdown equal to its golden file and an HTML page that a headless Chromium opens without
an error, fetching nothing, with the expected table rows, every chart drawn (ECharts' SVG) and a
screenshot of a chart that is not blank; a user template is found by name in PROFSH_TEMPLATES;
hostile names are shown as written and run nothing; broken templates fail naming their file and
line; profsh.report from Lua; profsh run --report.

Usage: check_report.py PROFSH TESTS_DIR [BUILD_DIR]
Set PROFSH_UPDATE_GOLDEN=1 to rewrite the golden Markdown (then read the diff).
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


KINETO = "data/kineto/"
SIMPLE_ADD = KINETO + "critical_path_simple_add_benchmark_result_493459_1694039959_trace.json.gz"
SMALL = KINETO + "execution_trace_benchmark_simple_add_trace.json.gz"
TRITON = KINETO + "triton_example_triton_example.json.gz"
RANKS = ["ranks/data/rank-0.json.gz", "ranks/data/rank-1.json.gz"]

# The tensorboard template's charts on SIMPLE_ADD (step breakdown, top operators, top kernels;
# it records no memory) and its sections' first tables.
TB_CHARTS = 3
TB_TABLES = {"overview": (0, ["0"]), "kernel": (0, [])}
TB_SECTIONS = ["overview", "operator", "kernel", "memory", "distributed", "module"]

# template -> (traces, charts expected, {section id: (table index, first-column texts)})
CASES = {
    "summary": ([SIMPLE_ADD], 2, {
        "operators": (0, ["cudaDeviceGetStreamPriorityRange", "cudaFree", "cudaLaunchKernel",
                          "aten::cudnn_convolution"]),
        "categories": (0, ["runtime", "cpu_op", "annotation", "copy", "kernel", "set"])}),
    "gpu": ([SIMPLE_ADD], 4, {
        "temporal": (0, ["0"]),
        "kernels": (0, ["MEMORY", "COMPUTATION"]),
        "critical_path": (0, ["", "cpu_bound", "gpu_compute_bound", "gpu_kernel_kernel_overhead",
                              "gpu_kernel_launch_overhead"])}),
    "compile": ([TRITON], 2, {
        "regions": (0, ["Torch-Compiled Region: 0/0"]),
        "provenance": (0, ["gpu"])}),
    "ranks": (RANKS, 2, {
        "ranks": (0, ["0", "1"]),
        "stragglers": (0, ["1", "0"])}),
    "diff": ([SIMPLE_ADD, SMALL], 2, {
        "overview": (0, ["added", "deleted", "increased", "decreased", "unchanged"])}),
    # The TensorBoard plugin's layout; its first chart (the screenshot's) is the overview's step
    # breakdown.
    "tensorboard": ([SIMPLE_ADD], TB_CHARTS, TB_TABLES),
}

EVIL = ("<script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=1\"> \"dq\" 'sq' "
        "`tick` |pipe| *star* _u_ [l](http://x) é ü 日本 # h & &amp; </textarea>")

# Put first in <head>: records errors and console.error calls, then, once the page has loaded
# and its charts drawn, what the test checks, as JSON in an attribute --dump-dom shows.
PROBE = """<script>
window.__errors = [];
window.addEventListener("error", function (e) { __errors.push(String(e.message)); }, true);
(function () { var ce = console.error;
  console.error = function () { __errors.push(Array.prototype.join.call(arguments, " ")); ce.apply(console, arguments); }; })();
window.addEventListener("load", function () { setTimeout(function () {
  // Each chart's tooltip shown (its text comes from names too), then the page read.
  document.querySelectorAll("div.chart").forEach(function (c) {
    echarts.getInstanceByDom(c).dispatchAction({type: "showTip", seriesIndex: 0, dataIndex: 0}); });
}, 300); setTimeout(function () {
  var tips = Array.prototype.map.call(document.querySelectorAll("div.chart > div:not(:first-child)"),
                                      function (d) { return d.textContent; });
  var out = {errors: __errors, tips: tips, pwned: !!window.__pwned, sections: {}, charts: [], fetched: [],
             title: document.querySelector("h1").textContent, cells: []};
  performance.getEntriesByType("resource").forEach(function (r) {
    if (r.name.indexOf("data:") !== 0) out.fetched.push(r.name); });
  document.querySelectorAll("section").forEach(function (s) {
    out.sections[s.id] = Array.prototype.map.call(s.querySelectorAll("table"), function (t) {
      return Array.prototype.map.call(t.tBodies[0].rows, function (r) { return r.cells[0].textContent; }); }); });
  document.querySelectorAll("td").forEach(function (td) { out.cells.push(td.textContent); });
  document.querySelectorAll("div.chart").forEach(function (c) {
    out.charts.push({rendered: c.getAttribute("data-rendered") === "true",
                     paths: c.querySelectorAll("svg path").length,
                     texts: Array.prototype.map.call(c.querySelectorAll("svg text"),
                                                     function (t) { return t.textContent; })}); });
  // How many lines each section's first text cell's text takes (a name squeezed to one letter
  // a line takes as many lines as letters): one client rectangle per line box.
  out.first_text_lines = {};
  document.querySelectorAll("section").forEach(function (s) {
    var td = s.querySelector("td.text");
    if (!td) return;
    var range = document.createRange();
    range.selectNodeContents(td);
    var tops = {};
    Array.prototype.forEach.call(range.getClientRects(), function (r) { tops[Math.round(r.top)] = 1; });
    out.first_text_lines[s.id] = Object.keys(tops).length; });
  out.script_elements = document.querySelectorAll("script").length;
  // A header click sorts the table: the first table's numeric column, descending, then ascending.
  var table = Array.prototype.filter.call(document.querySelectorAll("table.sortable"),
    function (t) { return t.tBodies[0].rows.length > 2 && t.querySelector("th.num"); })[0];
  var th = table && table.querySelector("th.num");
  if (th) {
    var col = Array.prototype.indexOf.call(th.parentNode.cells, th);
    var values = function () { return Array.prototype.map.call(table.tBodies[0].rows,
      function (r) { return r.cells[col].getAttribute("data-v"); })
      .filter(function (v) { return v !== null; }).map(parseFloat); };
    th.click(); out.sorted_desc = values(); th.click(); out.sorted_asc = values();
  }
  document.documentElement.setAttribute("data-probe", JSON.stringify(out));
}, 900); });
</script>"""

# For the screenshot: the first chart alone, filling a small window.
SHOT_STYLE = """<style>#chart-1{position:fixed!important;left:0;top:0;width:480px!important;
height:320px!important;z-index:10;background:#fff}</style>"""


def chromium_args(browser, work):
    return [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--user-data-dir=" + os.path.join(work, "chromium"), "--virtual-time-budget=5000"]


def probe(browser, html_path, work):
    text = open(html_path, encoding="utf-8").read()
    page = html_path + ".probe.html"
    open(page, "w", encoding="utf-8").write(text.replace("<head>", "<head>\n" + PROBE, 1))
    r = subprocess.run(chromium_args(browser, work) + ["--dump-dom", "file://" + page],
                       capture_output=True, text=True, timeout=120)
    m = re.search(r'data-probe="([^"]*)"', r.stdout)
    if not m:
        return None, r.stderr[-400:]
    raw = m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return json.loads(raw), ""


def png_pixels(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA PNG (Chromium's screenshots)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6), "unexpected PNG format"
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    prev = bytearray(stride)
    rows = []
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * channels:x * channels + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def screenshot_check(browser, html_path, work, name):
    text = open(html_path, encoding="utf-8").read()
    page = html_path + ".shot.html"
    open(page, "w", encoding="utf-8").write(text.replace("</head>", SHOT_STYLE + "</head>", 1))
    shot = os.path.join(work, name + ".png")
    subprocess.run(chromium_args(browser, work) + ["--window-size=480,320", "--screenshot=" + shot,
                                                  "file://" + page],
                   capture_output=True, text=True, timeout=120)
    if not os.path.exists(shot):
        check(False, name + ": a screenshot was taken")
        return
    width, height, rows = png_pixels(shot)
    pixels = [p for row in rows for p in row]
    non_white = sum(1 for p in pixels if min(p) < 235)
    # ECharts' first series colour (#5470c6): the bars or the line themselves.
    series = sum(1 for p in pixels if abs(p[0] - 0x54) < 24 and abs(p[1] - 0x70) < 24 and abs(p[2] - 0xc6) < 24)
    check(non_white > 0.01 * len(pixels) and series > 40,
          "%s: the screenshot of its first chart is not blank (%d of %d pixels drawn, %d in the first "
          "series' colour)" % (name, non_white, len(pixels), series))


def run(profsh, args, cwd, env=None):
    return subprocess.run([profsh] + args, capture_output=True, text=True, cwd=cwd, env=env)


def compare_golden(tests_dir, name, markdown_path):
    golden = os.path.join(tests_dir, "report", "golden", name + ".md")
    got = open(markdown_path, encoding="utf-8").read()
    if os.environ.get("PROFSH_UPDATE_GOLDEN"):
        open(golden, "w", encoding="utf-8").write(got)
    want = open(golden, encoding="utf-8").read() if os.path.exists(golden) else None
    if got != want:
        import difflib
        diff = "".join(list(difflib.unified_diff((want or "").splitlines(True), got.splitlines(True),
                                                 "golden/" + name + ".md", "got"))[:40])
        print(diff)
    check(got == want, name + ": the Markdown equals golden/%s.md" % name)


def memory_trace(path, points, spike_at):
    """A trace of one process's allocations: `points` small steps up and down, and one narrow
    spike (a 400 MB allocation freed at the next point) at index `spike_at`. Returns the peak."""
    events, total, peak = [], 0, 0
    for i in range(points):
        if i == spike_at:
            size = 400_000_000
        elif i == spike_at + 1:
            size = -400_000_000
        else:
            size = 4096 if (i // 50) % 2 == 0 else -4096
            if total + size < 0:
                size = -size
        total += size
        peak = max(peak, total)
        events.append({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 7,
                       "tid": 7, "ts": 1000 + i, "args": {"Bytes": size, "Total Allocated": total,
                                                         "Device Type": 0, "Device Id": -1, "Addr": i}})
    events.append({"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 7, "tid": 7, "ts": 1000,
                   "dur": points})
    with open(path, "w") as f:
        json.dump({"traceEvents": events}, f)
    return peak


def memory_peak_check(profsh, tests_dir, work, browser):
    """A memory curve of 30,000 points whose peak is one narrow spike: the chart's maximum is the
    peak, in the HTML's chart data and in the Markdown's table."""
    trace = os.path.join(work, "spike.json")
    peak = memory_trace(trace, 30000, 17321)
    html, md = os.path.join(work, "spike.html"), os.path.join(work, "spike.md")
    r = run(profsh, ["report", trace, "-o", html], tests_dir)
    check(r.returncode == 0, "memory spike: the summary report is written (%s)" % r.stderr.strip()[-300:])
    if r.returncode != 0:
        return
    page = open(html, encoding="utf-8").read()
    charts = [json.loads(m) for m in re.findall(r'<script type="application/json" id="chart-\d+-data">(.*?)</script>',
                                               page, re.S)]
    lines = [c for c in charts if c["kind"] == "line"]
    top = max(max(se["values"]) for c in lines for se in c["series"]) if lines else None
    points = len(lines[0]["x"]) if lines else 0
    check(len(lines) == 1 and top == peak and points <= 2000,
          "memory spike: the chart's maximum (%s) is the peak (%d), %d points drawn" % (top, peak, points))
    check("Drawn from %d of 30000 points" % points in page, "memory spike: the page says how many points it drew")
    check("peak %.1f MB (%s bytes)" % (peak / 1e6, format(peak, ",")) in page,
          "memory spike: the text gives the peak in MB and in bytes")
    r = run(profsh, ["report", trace, "-o", md], tests_dir)
    text = open(md, encoding="utf-8").read() if r.returncode == 0 else ""
    check(format(peak, ",") in text.split("**Memory held by process")[-1],
          "memory spike: the Markdown table of the chart shows the peak")
    if browser:
        result, err = probe(browser, html, work)
        texts = [t for c in (result or {}).get("charts", []) for t in c.get("texts", [])]
        check(result is not None and any(t.endswith(" MB") for t in texts),
              "memory spike: the chart's axis shows MB (%s)" % texts[:12])


def wording_check(profsh, tests_dir, work):
    """A CPU-only trace of one process: "1 process", no device columns, one number format per
    column."""
    md = os.path.join(work, "cpu_only.md")
    trace = os.path.join(work, "spike.json")  # one process, no device time
    r = run(profsh, ["report", trace, "-o", md], tests_dir)
    text = open(md, encoding="utf-8").read() if r.returncode == 0 else ""
    check(", 1 process, 1 thread, " in text, "summary: one process is \"1 process\" (%s)" %
          [l for l in text.splitlines() if "events" in l][:1])
    check("self_cuda_time_total" not in text and "self device" not in text and "self_device" not in text,
          "summary: a CPU-only trace gets no device columns")
    # SIMPLE_ADD's "avg per call" mixed 24587247.0, 2235204.27 and 238.381 in one column.
    md = os.path.join(work, "formats.md")
    r = run(profsh, ["report", SIMPLE_ADD, "-o", md], tests_dir)
    text = open(md, encoding="utf-8").read() if r.returncode == 0 else ""
    rows = [l.split(" | ") for l in text.split("## Top operators")[-1].split("\n\n")[2].splitlines()[2:]]
    averages = [row[5] for row in rows if len(row) > 6]
    decimals = {len(v.split(".")[1]) if "." in v else 0 for v in averages}
    check(len(averages) > 10 and len(decimals) == 1,
          "summary: one number format per column (avg per call: %s)" % averages[:5])


def diff_report_check(profsh, tests_dir, work):
    """The diff report's "What grew": by time, most first, saying so, without HTA's group."""
    md = os.path.join(work, "diff_rule.md")
    r = run(profsh, ["report", SIMPLE_ADD, SMALL, "--template", "diff", "-o", md], tests_dir)
    text = open(md, encoding="utf-8").read() if r.returncode == 0 else ""
    grew = text.split("## What grew")[-1].split("## What shrank")[0].replace("\\", "")
    check("most first, by diff_duration: the test's total time of the name minus the control's" in grew,
          "diff report: What grew says which rule it uses")
    lines = grew.splitlines()
    first = next((i for i, l in enumerate(lines) if l.startswith("| ")), len(lines))
    table = []  # the section's first table (the chart's table follows); cut at " | "
    for l in lines[first:]:
        if not l.startswith("|"):
            break
        table.append(l)
    header = [c.strip() for c in table[0].strip("|").split("|")] if table else []
    changes = [float(l.split(" | ")[1].replace(",", "")) for l in table[2:]] if table else []
    check(changes and all(c > 0 for c in changes) and changes == sorted(changes, reverse=True),
          "diff report: What grew ranks by time change, largest first (%s)" % changes[:5])
    check("unchanged" not in grew and "change" not in header,
          "diff report: What grew lists no HTA group (%s)" % header)


def main():
    profsh, tests_dir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    work = tempfile.mkdtemp(prefix="profsh_report_")
    env = dict(os.environ, PROFSH_TEMPLATES=os.path.join(tests_dir, "report", "templates"))
    try:
        for name, (traces, charts, tables) in CASES.items():
            md = os.path.join(work, name + ".md")
            r = run(profsh, ["report"] + traces + ["--template", name, "-o", md], tests_dir)
            check(r.returncode == 0, "%s: the Markdown report is written (%s)" % (name, r.stderr.strip()[-300:]))
            if r.returncode == 0:
                compare_golden(tests_dir, name, md)
            html = os.path.join(work, name + ".html")
            r = run(profsh, ["report"] + traces + ["--template", name, "-o", html], tests_dir)
            check(r.returncode == 0, "%s: the HTML report is written" % name)
            if r.returncode != 0:
                continue
            if not browser:
                print("skip %s in the browser: chromium is not installed" % name)
                continue
            size = os.path.getsize(html)
            check(size < 3 << 20, "%s: the page is small (%d bytes)" % (name, size))
            result, err = probe(browser, html, work)
            if result is None:
                check(False, "%s: the browser ran the page's script (%s)" % (name, err))
                continue
            check(result["errors"] == [], "%s: no error in the browser's console (%s)" % (name, result["errors"]))
            check(result["fetched"] == [], "%s: nothing is fetched (%s)" % (name, result["fetched"]))
            drawn = [c for c in result["charts"] if c["rendered"] and c["paths"] >= 3]
            check(len(result["charts"]) == charts and len(drawn) == charts,
                  "%s: %d charts drawn (%s)" % (name, charts, result["charts"]))
            for section, (index, first_column) in tables.items():
                got = result["sections"].get(section, [])
                got = got[index][:len(first_column)] if len(got) > index else None
                check(got == first_column, "%s: section %s's table %d holds %s (%s)" %
                      (name, section, index, first_column, got))
            if "sorted_desc" in result:
                d, a = result["sorted_desc"], result["sorted_asc"]
                check(d == sorted(d, reverse=True) and a == sorted(a) and len(d) > 1,
                      "%s: a header click sorts the table, descending then ascending" % name)
            if name == "tensorboard":
                check(list(result["sections"])[:len(TB_SECTIONS)] == TB_SECTIONS,
                      "tensorboard: every view has its section, in the plugin's order (%s)"
                      % list(result["sections"]))
            if name == "compile":
                lines = result["first_text_lines"].get("regions", 99)
                check(lines == 1, "compile: a region's name stays on one line in a wide table "
                                  "(%d lines)" % lines)
            screenshot_check(browser, html, work, name)

        memory_peak_check(profsh, tests_dir, work, browser)
        wording_check(profsh, tests_dir, work)
        diff_report_check(profsh, tests_dir, work)

        # A user template, found by name; every text in it hostile.
        md, html = os.path.join(work, "team.md"), os.path.join(work, "team.html")
        r = run(profsh, ["report", SMALL, "--template", "team", "-o", md], tests_dir, env)
        check(r.returncode == 0, "a user template is found by name in PROFSH_TEMPLATES (%s)" % r.stderr.strip())
        if r.returncode == 0:
            compare_golden(tests_dir, "team", md)
            text = open(md, encoding="utf-8").read()
            table_rows = [l for l in text.splitlines() if l.startswith("| ") and "script" in l]
            check(table_rows and all(len(re.findall(r"(?<!\\)\|", l)) == l.count(" | ") + 2 for l in table_rows),
                  "Markdown: a hostile name's pipes do not split its table row")
            check("<script>" not in text and "\\<script\\>" in text, "Markdown: tags are escaped")
        r = run(profsh, ["-e", "print(table.concat(profsh.templates(), ','))"], tests_dir, env)
        check(r.stdout.strip() == "broken_call,broken_engine,broken_link,broken_syntax,compile,diff,gpu,ranks,"
                                  "summary,team,tensorboard", "profsh.templates() lists the user's and the built-in ones (%s)"
              % r.stdout.strip())
        # The same template as a path, from Lua: profsh.report.
        r = run(profsh, ["-e", "local f = profsh.report(profsh.load(arg[1]), {template = arg[2], output = arg[3]})"
                         " print(#f, f[1])", "--", SMALL, os.path.join(tests_dir, "report", "templates", "team.lua"),
                         html], tests_dir)
        check(r.returncode == 0 and r.stdout.strip() == "1\t" + html,
              "profsh.report takes a template's path and returns the files written (%s)" % r.stderr.strip())
        if r.returncode == 0:
            # Without a browser too: no name reaches the page as markup.
            page = open(html, encoding="utf-8").read()
            check("<script>window.__pwned" not in page and "<img src=x" not in page
                  and "&lt;script&gt;window.__pwned" in page,
                  "HTML: hostile names are escaped in the page's text")
        if r.returncode == 0 and browser:
            result, err = probe(browser, html, work)
            check(result is not None and not result["pwned"] and result["errors"] == [],
                  "HTML: hostile names run nothing (%s)" % (result and result["errors"] or err))
            if result is not None:
                check(result["title"] == "Team report " + EVIL, "HTML: the hostile title reads as written")
                check(EVIL in result["cells"], "HTML: a hostile table cell reads as written")
                # The probe's, the library's, the two charts' data and the page's own: no other.
                check(result["script_elements"] == 5,
                      "HTML: no script element came from a name (%d)" % result["script_elements"])
                check(len(result["charts"]) == 2 and all(c["rendered"] and c["paths"] >= 3 for c in result["charts"]),
                      "HTML: a bar and a line chart with hostile names are drawn (%s)" % result["charts"])
                check(any("<img src=x" in t for t in result["tips"]),
                      "HTML: the chart's tooltip shows a hostile name as text (%s)" % result["tips"])
        # A hostile trace name in the built-in template's title.
        evil_trace = os.path.join(work, "run <img src=x onerror=\"window.__pwned=1\"> 'q' é.json.gz")
        shutil.copy(os.path.join(tests_dir, SMALL), evil_trace)
        html = os.path.join(work, "evil_trace.html")
        r = run(profsh, ["report", evil_trace, "-o", html], tests_dir)
        check(r.returncode == 0, "a trace with a hostile name is reported")
        if r.returncode == 0 and browser:
            result, err = probe(browser, html, work)
            check(result is not None and result["title"] == "profsh report: " + os.path.basename(evil_trace)
                  and result["errors"] == [] and not result["pwned"], "HTML: a hostile trace name reads as written in the title")

        # Broken templates: the error names the template's file and line.
        templates = os.path.join(tests_dir, "report", "templates")
        for name, want in [
                ("broken_call", "broken_call.lua:4: report:table: rows, key averages or a list of row tables "
                                "expected, got number"),
                ("broken_syntax", "broken_syntax.lua:3: ')' expected (to close '(' at line 2)"),
                ("broken_engine", "broken_engine.lua:3: bad option 'duration_ratio' to 'kernel_breakdown'"),
                ("broken_link", "broken_link.lua:3: report:link: no section has the id 'nowhere'")]:
            out = os.path.join(work, name + ".html")
            r = run(profsh, ["report", SMALL, "--template", name, "-o", out], tests_dir, env)
            check(r.returncode == 1 and os.path.join(templates, want) in r.stderr and not os.path.exists(out),
                  "%s: fails naming the file and line, writes nothing (%s)" % (name, r.stderr.strip()))
        # A template in a folder deep enough that Lua cuts its name (60 characters) is named in
        # full all the same.
        deep = os.path.join(work, "a_folder_deep_enough_that_lua_would_cut_the_name_of_a_template_in_it")
        os.mkdir(deep)
        shutil.copy(os.path.join(templates, "broken_call.lua"), deep)
        out = os.path.join(work, "deep.html")
        r = run(profsh, ["report", SMALL, "--template", os.path.join(deep, "broken_call.lua"), "-o", out], tests_dir)
        check(r.returncode == 1 and os.path.join(deep, "broken_call.lua:4: report:table:") in r.stderr,
              "a template under a long path is named in full (%s)" % r.stderr.strip())
        # Options a template gets wrong: a side file's name that leaves the folder, a figure
        # named twice, a timeline of -1 buckets.
        for name, body, want in [
                ("bad_svg", 'report:section("S", "s")\nreport:svg("<svg/>", {file = "../x.svg"})\n',
                 "bad_svg.lua:3: report:svg: file must be NAME.svg (letters, digits, - and _), got ../x.svg"),
                ("twice_svg", 'report:section("S", "s")\nreport:svg("<svg/>", {file = "a.svg"})\n'
                              'report:svg("<svg/>", {file = "a.svg"})\n',
                 "twice_svg.lua:4: report:svg: two figures are named a.svg"),
                ("bad_buckets", 'report:section("S", "s")\nreport:timeline(report.trace, {buckets = -1})\n',
                 "'buckets' must be a whole number from 1 to 10000")]:
            path = os.path.join(work, name + ".lua")
            with open(path, "w") as f:
                f.write("local report = ...\n" + body)
            out = os.path.join(work, name + ".md")
            r = run(profsh, ["report", SMALL, "--template", path, "-o", out], tests_dir)
            check(r.returncode == 1 and want in r.stderr and not os.path.exists(out),
                  "%s: a clear error, nothing written (%s)" % (name, r.stderr.strip()))
        # A Markdown report whose name has spaces and parentheses links its flamegraph whole.
        md = os.path.join(work, "my report (v2).md")
        r = run(profsh, ["report", SMALL, "-o", md], tests_dir)
        text = open(md, encoding="utf-8").read() if r.returncode == 0 else ""
        check("](my%20report%20%28v2%29.flamegraph.svg)" in text
              and os.path.exists(os.path.join(work, "my report (v2).flamegraph.svg")),
              "Markdown: a side file's link is percent-encoded (%s)" % r.stderr.strip())
        r = run(profsh, ["report", SMALL, "--template", "nope", "-o", os.path.join(work, "x.html")], tests_dir, env)
        check(r.returncode == 1 and "no template named 'nope' (built in: compile, diff, gpu, ranks, summary, tensorboard;" in r.stderr,
              "an unknown template is an error listing the built-in ones")
        r = run(profsh, ["report", "no_such_trace.json", "-o", os.path.join(work, "x.html")], tests_dir)
        check(r.returncode == 1 and "profsh report: cannot read no_such_trace.json: No such file" in r.stderr,
              "a missing trace is an error naming it (%s)" % r.stderr.strip())
        r = run(profsh, ["report", SMALL, "-o", os.path.join(work, "x.txt")], tests_dir)
        check(r.returncode == 1 and "a report is written as .html or .md" in r.stderr, "an unknown output kind is an error")
        r = run(profsh, ["report", SMALL, "--template", "diff", "-o", os.path.join(work, "x.md")], tests_dir)
        check(r.returncode == 1 and "the diff template compares two traces" in r.stderr,
              "the diff template of one trace says it needs two")

        r = run(profsh, ["run", "--report", "x.txt", "--", "/bin/true"], work)
        check(r.returncode == 2 and "--report x.txt: a report is written as .html or .md" in r.stderr,
              "profsh run --report checks the report's name before running anything")
        # profsh run --report: a live run's report.
        pipeline = os.path.join(os.path.dirname(profsh), "nvtx_pipeline")
        if os.path.exists(pipeline):
            out = os.path.join(work, "run.md")
            r = run(profsh, ["run", "--no-table", "-o", os.path.join(work, "run.profsh"), "--report", out, "--",
                             pipeline], work)
            text = open(out, encoding="utf-8").read() if os.path.exists(out) else ""
            check(r.returncode == 0 and "## Top operators" in text and "run.profsh" in text,
                  "profsh run --report writes the run's report (%s)" % r.stderr.strip()[-300:])
        else:
            print("skip profsh run --report: nvtx_pipeline is not built")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("report: %d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
