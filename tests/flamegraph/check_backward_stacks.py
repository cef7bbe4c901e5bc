#!/usr/bin/env python3
"""The Python-stack flamegraph of a live recording with a clear backward pass
(tests/programs/backward_model.py under `profsh run --activities torch --with-stack`): its total
equals the operators' total self CPU time (key_averages, the same trace); the backward pass is in
it (the backward operators' time is drawn, under their forward operators' stacks or [backward]);
what had no stack is said; torch's export_stacks of the same trace falls short, as the issue
measured.

Usage: check_backward_stacks.py PROFSH PROGRAMS_DIR   (exit 77: torch is not installed)

PROFSH_TORCH_PYTHON (default /usr/bin/python3) runs the program, behind the command prefix
PROFSH_TORCH_WRAP (e.g. "tests/torch2/in_root.sh ROOT" for torch 2.6 in the Debian 13 root).
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SVG_NS = "{http://www.w3.org/2000/svg}"

PYTHON = os.environ.get("PROFSH_TORCH_PYTHON", "/usr/bin/python3")
WRAP = shlex.split(os.environ.get("PROFSH_TORCH_WRAP", ""))
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


# Figures of the recording, computed by profsh from the same trace, one per line.
FIGURES = r"""
local t = profsh.load(arg[1])
local avgs = t:key_averages()
local ops = avgs:total_average().self_cpu_time_total
local backward = 0  -- everything inside autograd's evaluate_function wrappers (not nested)
for _, a in ipairs(avgs) do
  if a.key:find("^autograd::engine::evaluate_function: ") then backward = backward + a.cpu_time_total end
end
local s = t:flamegraph(arg[2], {stacks = "python"})
t:export_stacks(arg[3], "self_cpu_time_total")
local exported = 0
for line in io.lines(arg[3]) do exported = exported + tonumber(line:match(" (%S+)$")) end
print("ops", ops)
print("backward_ops", backward)
print("graph", s.total)
print("exported", exported)
print("in_backward_frame", s.backward and s.backward.value or 0)
print("unstacked", s.unstacked and s.unstacked.value or 0)
print("inherited", s.inherited and s.inherited.value or 0)
print("note", s.note or "")
"""


def frames(svg_path):
    """(name, value) of every frame of a flamegraph SVG, from its titles."""
    root = ET.parse(svg_path).getroot()
    out = []
    for title in root.iter(SVG_NS + "title"):
        m = re.match(r"^(.*) \(([\d,]+) \S+, [\d.]+%\)$", title.text or "")
        if m:
            out.append((m.group(1), int(m.group(2).replace(",", ""))))
    return out


def main():
    profsh, programs = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    probe = subprocess.run(WRAP + [PYTHON, "-c", "import torch; print(torch.__version__)"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        print("skip: torch is not installed for %s" % PYTHON)
        return 77
    version = probe.stdout.strip()
    work = tempfile.mkdtemp(prefix="profsh_backward_")
    try:
        return check_recording(profsh, programs, version, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def check_recording(profsh, programs, version, work):
    trace = os.path.join(work, "backward.profsh")
    r = subprocess.run(WRAP + [profsh, "run", "--activities", "torch", "--with-stack", "--no-table", "-o", trace,
                               "--", PYTHON, os.path.join(programs, "backward_model.py"), "8"],
                       capture_output=True, text=True, cwd=work, timeout=600)
    check(r.returncode == 0 and os.path.exists(trace),
          "torch %s: the program is recorded with stacks (%s)" % (version, r.stderr[-300:]))
    if r.returncode != 0:
        return 1
    script = os.path.join(work, "figures.lua")
    open(script, "w").write(FIGURES)
    svg, folded = os.path.join(work, "backward.svg"), os.path.join(work, "exported.folded")
    r = subprocess.run([profsh, script, trace, svg, folded], capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, "the figures are computed (%s)" % r.stderr[-300:])
    if r.returncode != 0:
        return 1
    f = dict(line.split("\t", 1) for line in r.stdout.splitlines())
    ops, graph, exported = float(f["ops"]), float(f["graph"]), float(f["exported"])
    backward_ops = float(f["backward_ops"])
    print("torch %s: operators %.0f us (backward %.0f us), flamegraph %.0f us, export_stacks %.0f us; %s" %
          (version, ops, backward_ops, graph, exported, f["note"] or "every event had a stack"))
    check(backward_ops > 0.2 * ops, "the program's backward pass is clear (%.0f of %.0f us)" % (backward_ops, ops))
    check(abs(graph - ops) <= max(1.0, 1e-6 * ops),
          "the flamegraph's total (%.3f us) equals the operators' total self CPU time (%.3f us)" % (graph, ops))
    # Drawn without any stack: only what the note names, and the note is there when any was.
    hidden = float(f["in_backward_frame"]) + float(f["unstacked"])
    check((hidden > 0) == (f["note"] != ""), "what had no stack is said (%s)" % (f["note"] or "nothing"))
    # Every operator ran inside train(): the frames of train carry all the time but what was
    # drawn without a stack, backward operators included (under their forward operators' stacks).
    train = sum(value for name, value in frames(svg) if re.search(r"backward_model\.py\(\d+\):_train$", name))
    check(train + hidden >= 0.99 * ops,
          "the time under train() (%.0f us) and without a stack (%.0f us) is the operators' total (%.0f us)"
          % (train, hidden, ops))
    check(exported < graph, "torch's export_stacks of the same trace falls short (%.0f < %.0f us)" % (exported, graph))
    print("backward stacks: %d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
