#!/usr/bin/env python3
"""Flamegraph tests: the SVG parses as XML and has exactly the expected frames, values and
widths; line order and duplicate lines do not change it; names are escaped; empty input is a
clear error; differential, icicle and speedscope outputs; graphs of traces. When Chromium is
installed, the embedded script is run in it: zoom, search and reset.

Usage: check_flamegraph.py PROFSH TESTS_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SVG_NS = "{http://www.w3.org/2000/svg}"
failures = []


def check(cond, what):
    if cond:
        print("ok   " + what)
    else:
        print("FAIL " + what)
        failures.append(what)


def run(profsh, *args, cwd=None):
    return subprocess.run([profsh, *args], capture_output=True, text=True, cwd=cwd)


def frames_of(svg_path):
    """(name, value, x, width, y) of every frame, from the SVG's <title> and <rect>."""
    root = ET.parse(svg_path).getroot()
    group = [g for g in root.iter(SVG_NS + "g") if g.get("id") == "frames"][0]
    out = []
    for g in group:
        title = g.find(SVG_NS + "title").text
        m = re.match(r"^(.*) \(([\d,]+) (\S+), ([\d.]+)%(?:; ([-+\d.]+)%)?\)$", title)
        rect = g.find(SVG_NS + "rect")
        out.append({"name": m.group(1), "value": int(m.group(2).replace(",", "")), "pct": m.group(4),
                    "delta": m.group(5), "x": float(rect.get("x")), "width": float(rect.get("width")),
                    "y": float(rect.get("y")), "fill": rect.get("fill"), "depth": int(g.get("data-depth"))})
    return out


def expected_frames(lines):
    """Frame totals per path, computed independently from the folded lines."""
    totals = {(): 0}
    for line in lines:
        stack, count = line.rsplit(" ", 1)
        frames = tuple(stack.split(";"))
        totals[()] += int(count)
        for depth in range(1, len(frames) + 1):
            totals[frames[:depth]] = totals.get(frames[:depth], 0) + int(count)
    return totals


def main():
    profsh, tests_dir = os.path.abspath(sys.argv[1]), sys.argv[2]
    work = tempfile.mkdtemp(prefix="profsh_flame_")
    try:
        def write(name, text):
            path = os.path.join(work, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            return path

        lines = ["main;load;parse 40", "main;load;read 25", "main;compute;mm 120", "main;compute;relu 15",
                 "main;compute 10", "main;save 5", "idle 85"]
        src = write("known.folded", "\n".join(lines) + "\n")
        out = os.path.join(work, "known.svg")
        r = run(profsh, "flamegraph", src, "-o", out, "--countname", "us")
        check(r.returncode == 0, "flamegraph of a known input succeeds")
        frames = frames_of(out)
        want = expected_frames(lines)
        total = want[()]
        got = {}
        for f in frames:
            got.setdefault(f["depth"], []).append(f)
        check(len(frames) == len(want), "one frame per distinct path (%d, want %d)" % (len(frames), len(want)))
        names_values = sorted((f["name"], f["value"]) for f in frames)
        want_nv = sorted(("all" if p == () else p[-1], v) for p, v in want.items())
        check(names_values == want_nv, "frame names and values equal the input's totals")
        width_ok = all(abs(f["width"] - f["value"] * 1180.0 / total) < 0.101 for f in frames)
        check(width_ok, "widths are value * 1180 / total pixels")
        by_name = {f["name"]: f for f in frames}
        # Siblings in name order (compute before load), a parent's own samples before its children.
        tenth = lambda v: round(v * 10)
        check(tenth(by_name["compute"]["x"]) == tenth(by_name["main"]["x"]) and
              tenth(by_name["load"]["x"]) == tenth(by_name["compute"]["x"] + by_name["compute"]["width"]) and
              tenth(by_name["save"]["x"] + by_name["save"]["width"]) ==
              tenth(by_name["main"]["x"] + by_name["main"]["width"]) and
              abs(by_name["mm"]["x"] - by_name["compute"]["x"] - 10 * 1180.0 / total) < 0.101,
              "children sit side by side inside their parent, edges on the same 0.1 px grid")
        check(by_name["parse"]["y"] < by_name["load"]["y"] < by_name["main"]["y"], "deeper frames are drawn higher")

        shuffled = write("shuffled.folded", "\n".join(reversed(lines)) + "\n")
        split = write("split.folded", "\n".join(lines[:2] + ["main;compute;mm 60", "main;compute;mm 60"] + lines[3:]) + "\n")
        svgs = []
        for name, path in (("shuffled", shuffled), ("split", split)):
            o = os.path.join(work, name + ".svg")
            run(profsh, "flamegraph", path, "-o", o, "--countname", "us")
            svgs.append(open(o, "rb").read())
        reference = open(out, "rb").read()
        check(svgs[0] == reference, "reordered lines give an identical SVG")
        check(svgs[1] == reference, "duplicate lines give the same SVG as their sum")

        tricky = ["<script>;a&b 3", "\"quoted\" 'single';café ☕ 2", "x>y;注意 4"]
        src = write("tricky.folded", "\n".join(tricky) + "\n")
        o = os.path.join(work, "tricky.svg")
        r = run(profsh, "flamegraph", src, "-o", o, "--title", "T <&> \"q\"")
        try:
            names = sorted(f["name"] for f in frames_of(o))
            check(names == sorted(["all", "<script>", "a&b", "\"quoted\" 'single'", "café ☕", "x>y", "注意"]),
                  "names with <, &, quotes and non-ASCII text survive, escaped")
        except ET.ParseError as e:
            check(False, "tricky names give well-formed XML (%s)" % e)

        empty = write("empty.folded", "")
        r = run(profsh, "flamegraph", empty, "-o", os.path.join(work, "empty.svg"))
        check(r.returncode == 1 and "empty" in r.stderr and empty in r.stderr,
              "an empty input is a clear error: " + r.stderr.strip())
        check(not os.path.exists(os.path.join(work, "empty.svg")), "no SVG is left behind on error")

        o = os.path.join(work, "narrow.svg")
        run(profsh, "flamegraph", src, "-o", o, "--minwidth", "30%")
        check(all(f["value"] >= 0.3 * 9 for f in frames_of(o)), "--minwidth 30% leaves out narrower frames")

        o = os.path.join(work, "icicle.svg")
        run(profsh, "flamegraph", os.path.join(work, "known.folded"), "-o", o, "--reverse")
        ice = {f["name"]: f for f in frames_of(o)}
        check(ice["parse"]["y"] > ice["load"]["y"] > ice["main"]["y"], "--reverse draws an icicle graph")

        before = write("before.folded", "main;a 50\nmain;b 50\n")
        after = write("after.folded", "main;a 80\nmain;b 20\n")
        o = os.path.join(work, "diff.svg")
        r = run(profsh, "flamegraph", after, "--diff", before, "-o", o)
        diff = {f["name"]: f for f in frames_of(o)}
        check(r.returncode == 0 and diff["a"]["value"] == 80 and diff["a"]["delta"] == "+30.00" and
              diff["b"]["delta"] == "-30.00", "differential: widths from the new profile, change in the title")
        check(diff["a"]["fill"].startswith("rgb(255,") and diff["b"]["fill"].endswith(",255)"),
              "differential: growth is red, shrinkage blue")

        speed = os.path.join(work, "known.speedscope.json")
        run(profsh, "flamegraph", os.path.join(work, "known.folded"), "-o", os.path.join(work, "k2.svg"),
            "--speedscope", speed, "--countname", "us")
        doc = json.load(open(speed))
        prof = doc["profiles"][0]
        frames_named = [doc["shared"]["frames"][i]["name"] for i in prof["samples"][0]]
        check(doc["$schema"].startswith("https://www.speedscope.app/") and prof["type"] == "sampled" and
              prof["unit"] == "microseconds" and sum(prof["weights"]) == total and prof["endValue"] == total and
              len(prof["samples"]) == len(lines) and frames_named[0] in ("main", "idle"),
              "speedscope export: sampled profile, frames shared, weights sum to the total")

        trace = os.path.join(tests_dir, "golden/cases/mlp_training_stack_flops/trace.json.gz")
        o = os.path.join(work, "trace_ops.svg")
        script = write("ops.lua", "local s = profsh.load(arg[1]):flamegraph(arg[2], {stacks='operators'})\n"
                                  "print(s.frames, s.total)\n")
        r = run(profsh, script, trace, o)
        ops = frames_of(o) if r.returncode == 0 else []
        check(r.returncode == 0 and any(f["name"] == "aten::addmm" for f in ops) and
              any(f["name"] == "train_step_0" and f["depth"] == 1 for f in ops),
              "a trace's operators as a flamegraph (roots are the top-level ranges)")
        o = os.path.join(work, "trace_py.svg")
        r = run(profsh, "flamegraph", trace, "-o", o, "--stacks", "python", "--minwidth", "0")
        py = frames_of(o) if r.returncode == 0 else []
        check(r.returncode == 0 and any("nn.Module:_MLP_0" == f["name"] for f in py), "a trace's Python stacks as a flamegraph")
        # torch's export_stacks leaves out what has no stack and truncates each event to whole
        # microseconds: every frame of its graph is in the trace's, no wider; the trace's adds up
        # to the operators' total and says what it drew without a stack.
        folded = os.path.join(work, "torch_stacks.folded")
        run(profsh, "-e", "profsh.load('%s'):export_stacks('%s', 'self_cpu_time_total')" % (trace, folded))
        o2 = os.path.join(work, "torch_stacks.svg")
        run(profsh, "flamegraph", folded, "-o", o2, "--countname", "us", "--minwidth", "0")
        ours = {}
        for f in py:
            ours[(f["name"], f["depth"])] = ours.get((f["name"], f["depth"]), 0) + f["value"]
        theirs = {}
        for f in frames_of(o2):
            theirs[(f["name"], f["depth"])] = theirs.get((f["name"], f["depth"]), 0) + f["value"]
        check(len(py) > 10 and all(ours.get(k, -1) >= v for k, v in theirs.items()),
              "every frame of the export_stacks graph is in the trace's Python-stack graph, no wider")
        total = run(profsh, "-e", "print(string.format('%%.0f', profsh.load('%s'):key_averages():"
                                  "total_average().self_cpu_time_total))" % trace).stdout.strip()
        root = [f["value"] for f in py if f["depth"] == 0]
        check(root and str(root[0]) == total and root[0] > theirs.get(("all", 0), 0),
              "the Python-stack graph's total is the operators' total (%s us; export_stacks': %s)"
              % (root and root[0], theirs.get(("all", 0))))
        # Here every event has a stack or runs inside an operator that has one: no note.
        check("note: " not in r.stdout and not any(f["name"].startswith("[") for f in py),
              "a trace whose events all have stacks draws no stackless frame (%s)" % r.stdout.strip())
        # Without the stacks of its forward operators, the backward pass goes under [backward],
        # the other stackless events under [no Python stack], and the command says so.
        stripped = write("stripped.json", json.dumps({"traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 0, "dur": 50,
             "args": {"Call stack": "train.py(3): step"}},
            {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: AddmmBackward0",
             "pid": 1, "tid": 1, "ts": 100, "dur": 30},
            {"ph": "X", "cat": "cpu_op", "name": "AddmmBackward0", "pid": 1, "tid": 1, "ts": 101, "dur": 28},
            {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 200, "dur": 20}]}))
        o = os.path.join(work, "stripped.svg")
        r = run(profsh, "flamegraph", stripped, "-o", o, "--minwidth", "0")
        d = {(f["name"], f["depth"]): f["value"] for f in frames_of(o)} if r.returncode == 0 else {}
        check(d.get(("all", 0)) == 100 and d.get(("[backward]", 1)) == 30 and d.get(("AddmmBackward0", 2)) == 28
              and d.get(("[no Python stack]", 1)) == 20 and d.get(("train.py(3):_step", 1)) == 50,
              "stackless events are drawn under [backward] and [no Python stack] (%s)" % d)
        check("note: 2 events of backward code that no forward stack reached (30 us, 30.0 %) under [backward]; "
              "1 event without a Python stack (20 us, 20.0 %) under [no Python stack]" in r.stdout,
              "the command says what had no stack (%s)" % r.stdout.strip())

        # A trace without Python stacks asked for its Python stacks: say that, not "no event
        # has a positive self_cpu_time_total".
        stackless = os.path.join(tests_dir, "golden/cases/resnet18_shapes_memory/trace.json.gz")
        r = run(profsh, "flamegraph", stackless, "-o", os.path.join(work, "none.svg"), "--stacks", "python")
        check(r.returncode == 1 and "the trace has no Python stacks" in r.stderr and "--stacks operators" in r.stderr,
              "Python stacks of a trace without stacks: the error says so (%s)" % r.stderr.strip())

        # Two runs of one program have different pids: a differential graph matches threads by
        # name by default (CLI and Lua), or every frame would be new.
        def run_trace(pid, step, load):
            return json.dumps({"traceEvents": [
                {"ph": "M", "name": "thread_name", "pid": pid, "tid": 1, "args": {"name": "main"}},
                {"ph": "M", "name": "thread_name", "pid": pid, "tid": 2, "args": {"name": "worker"}},
                {"ph": "X", "cat": "user_annotation", "name": "step", "pid": pid, "tid": 1, "ts": 0, "dur": step},
                {"ph": "X", "cat": "user_annotation", "name": "load", "pid": pid, "tid": 2, "ts": 0, "dur": load}]})
        run_a, run_b = write("run_a.json", run_trace(100, 100, 100)), write("run_b.json", run_trace(200, 150, 50))
        o = os.path.join(work, "runs_diff.svg")
        r = run(profsh, "flamegraph", run_b, "--diff", run_a, "-o", o)
        d = {f["name"]: f for f in frames_of(o)} if r.returncode == 0 else {}
        check(sorted(d) == ["all", "load", "main", "step", "worker"] and d["step"]["delta"] == "+25.00" and
              d["load"]["delta"] == "-25.00",
              "differential of two runs: threads matched by name, only the change shows (%s)" %
              {k: f["delta"] for k, f in d.items()})
        r = run(profsh, "flamegraph", run_b, "--diff", run_a, "--threads", "pids", "-o", o)
        d = {f["name"]: f for f in frames_of(o)} if r.returncode == 0 else {}
        check("main [pid 200]" in d and d["step"]["delta"] == "+75.00", "--threads pids: every frame of the new run is new")
        o = os.path.join(work, "runs_diff_lua.svg")
        r = run(profsh, "-e", "profsh.flamegraph_diff(profsh.load(arg[1]), profsh.load(arg[2]), arg[3])", "--",
                run_a, run_b, o)
        d = {f["name"]: f for f in frames_of(o)} if r.returncode == 0 else {}
        check(sorted(d) == ["all", "load", "main", "step", "worker"] and d["step"]["delta"] == "+25.00",
              "profsh.flamegraph_diff matches threads by name too (%s)" % r.stderr.strip())

        browser = shutil.which("chromium") or shutil.which("chromium-browser")
        if browser:
            interact(browser, os.path.join(work, "known.svg"), work)
        else:
            print("skip interaction test: chromium is not installed")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("flamegraph: %d failed" % len(failures))
    return 1 if failures else 0


DRIVER = """
<script type="text/ecmascript"><![CDATA[
window.addEventListener("load", function () {
  var out = {};
  function frameNamed(name) {
    for (var i = 0; i < frames.children.length; i++) if (nameOf(frames.children[i]) === name) return frames.children[i];
  }
  function width(name) { return parseFloat(frameNamed(name).querySelector("rect").getAttribute("width")); }
  out.before = width("compute");
  zoom(frameNamed("compute"));
  out.zoomed = width("compute");
  out.child = width("mm");
  out.hidden = frameNamed("load").classList.contains("hide");
  out.parent = frameNamed("main").classList.contains("parent");
  search("^(mm|relu)$");
  out.matched = document.getElementById("matched").textContent;
  out.fill = frameNamed("mm").querySelector("rect").getAttribute("fill");
  resetSearch();
  unzoom();
  out.after = width("compute");
  out.unhidden = !frameNamed("load").classList.contains("hide");
  document.documentElement.setAttribute("data-result", JSON.stringify(out));
});
]]></script>
"""


def interact(browser, svg, work):
    text = open(svg, encoding="utf-8").read().replace("</svg>", DRIVER + "</svg>")
    page = os.path.join(work, "interact.svg")
    open(page, "w", encoding="utf-8").write(text)
    r = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        "--user-data-dir=" + os.path.join(work, "chromium"), "--virtual-time-budget=3000",
                        "--dump-dom", "file://" + page], capture_output=True, text=True, timeout=120)
    m = re.search(r'data-result="([^"]*)"', r.stdout)
    if not m:
        check(False, "the browser ran the SVG's script (no result; stderr: %s)" % r.stderr[-300:])
        return
    res = json.loads(m.group(1).replace("&quot;", '"'))
    check(abs(res["zoomed"] - 1180) < 0.2 and res["child"] > 0.7 * 1180, "click zooms: the frame fills the width")
    check(res["hidden"] and res["parent"], "zoom hides unrelated frames and dims ancestors")
    # Zoomed into compute (145 samples: its own 10, mm 120, relu 15), mm and relu cover 135/145.
    check(res["matched"] == "Matched: %.1f%%" % (100.0 * 135 / 145) and res["fill"] == "rgb(230,0,230)",
          "search highlights matches and their share: " + res["matched"])
    check(abs(res["after"] - res["before"]) < 0.05 and res["unhidden"], "reset restores the graph")


if __name__ == "__main__":
    sys.exit(main())
