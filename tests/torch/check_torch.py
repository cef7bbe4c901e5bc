#!/usr/bin/env python3
"""profsh's PyTorch operator source against torch.profiler on the same script
(tests/torch/workload.py, run with Debian's torch 1.13): operator counts per (name, input
shapes) equal; backward operators link to the same forward operators; the stacks hold the
same nn.Module frames; FLOPs equal; per-operator allocated bytes (cpu_memory_usage) within 1%;
fwdbwd flows in the Chrome export as Kineto draws them. Where torch's own figures move between
runs (memory, backward stacks), profsh's must equal torch's in one of up to three runs
(TorchRuns).

Usage: check_torch.py PROFSH TESTS_TORCH_DIR   (exit 77: torch is not installed)

The workload runs with PROFSH_TORCH_PYTHON (default /usr/bin/python3), and both its runs (under
torch.profiler and under `profsh run`) behind the command prefix PROFSH_TORCH_WRAP (e.g.
"tests/torch2/in_root.sh ROOT" for torch 2.6 in the Debian 13 root). There, the operator source
is the one built on first use (tests/torch2/check_plugin_build.py), and the comparison of
torch-form stack groups, which is about torch 1.13's own form, is left out
(PROFSH_TORCH_STACK_GROUPS=0; see docs/TESTING.md).
"""
import collections
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

PYTHON = os.environ.get("PROFSH_TORCH_PYTHON", "/usr/bin/python3")
WRAP = shlex.split(os.environ.get("PROFSH_TORCH_WRAP", ""))
STACK_GROUPS = os.environ.get("PROFSH_TORCH_STACK_GROUPS", "1") != "0"
# Whether torch.profiler records stacks here (PROFSH_TORCH_WITH_STACK=0: torch 2.6 on Python 3.13
# crashes with with_stack=True, pytorch/pytorch#144094). Without them profsh's module frames are
# compared with what the workload's modules are, not with torch's.
TORCH_STACKS = os.environ.get("PROFSH_TORCH_WITH_STACK", "1") != "0"
WORKLOAD_MODULES = {"aten::conv2d": {"nn.Module: Net_0", "nn.Module: Conv2d_0"},
                    "aten::linear": {"nn.Module: Net_0", "nn.Module: Linear_0", "nn.Module: Linear_1"},
                    "aten::relu": {"nn.Module: Net_0"}}
STACK_FRAMES = 5  # group_by_stack_n of the stack comparison (workload.py's STACK_FRAMES)
# A C function's frame names the object it is bound to by its address in that process.
ADDRESS = re.compile(r" at 0x[0-9a-f]+>")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


DUMP = r"""
local t = profsh.load(arg[1])
-- str() of torch's input_shapes: nested lists (a tensor list's input is a list of shapes).
local function shapes(s)
  if type(s) ~= "table" then return tostring(s) end
  local parts = {}
  for i, v in ipairs(s) do parts[i] = shapes(v) end
  return "[" .. table.concat(parts, ", ") .. "]"
end
for _, a in ipairs(t:key_averages{group_by_input_shape = true}) do
  print(table.concat({"R", a.key, shapes(a.input_shapes), a.count, a.cpu_memory_usage, a.self_cpu_memory_usage,
                      string.format("%d", a.flops or 0)}, "\t"))
end
-- A sequence number's forward op: the first to start (the outermost), as in torch's event order.
local forward = {}
local events = t:events{limit = 1000000}
for _, e in ipairs(events) do
  local seq = e.args["Sequence number"]
  if e.ph == "X" and seq and not e.name:match("^autograd::engine") then
    local key = seq .. "/" .. e.tid
    local f = forward[key]
    if not f or e.ts < f.ts or (e.ts == f.ts and e.dur > f.dur) then forward[key] = e end
  end
end
for _, e in ipairs(events) do
  local seq = e.args["Sequence number"]
  if e.ph == "X" and seq and e.name:match("^autograd::engine::evaluate_function") then
    local f = forward[seq .. "/" .. (e.args["Fwd thread id"] or e.tid)]
    print(table.concat({"L", e.name, f and f.name or "none"}, "\t"))
  end
end
-- Operators grouped by their innermost frames, as key_averages(group_by_stack_n=N) groups them.
for _, a in ipairs(t:key_averages{group_by_stack_n = tonumber(arg[2])}) do
  local frames = {}
  for i, frame in ipairs(a.stack or {}) do
    if i <= tonumber(arg[2]) then frames[i] = frame end
  end
  print(table.concat({"S", a.key, a.count, table.concat(frames, "\t")}, "\t"))
end
-- Module frames per operator, with backward operators given their forward operator's stack (as
-- torch does).
for _, a in ipairs(t:key_averages{group_by_stack_n = 100}) do
  for _, frame in ipairs(a.stack or {}) do
    if frame:match("^nn%.Module: ") then print(table.concat({"M", a.key, frame}, "\t")) end
  end
end
"""


def check_flows(events):
    """fwdbwd flows as Kineto draws them: from the forward op with the backward node's sequence
    number on its forward thread that started last, to the backward node."""
    ops = [e for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    at = {(e["tid"], e["ts"]): e for e in ops}
    latest = {}
    for e in ops:
        a = e.get("args", {})
        if "Sequence number" in a and "Fwd thread id" not in a:
            key = (e["tid"], a["Sequence number"])
            if key not in latest or e["ts"] >= latest[key]["ts"]:
                latest[key] = e
    nodes = [e for e in ops if "Fwd thread id" in e.get("args", {}) and "Sequence number" in e["args"]
             and not e["name"].startswith("autograd::engine")]
    starts = {e["id"]: e for e in events if e.get("cat") == "fwdbwd" and e.get("ph") == "s"}
    finishes = {e["id"]: e for e in events if e.get("cat") == "fwdbwd" and e.get("ph") == "f"}
    wrong = []
    for flow, f in finishes.items():
        s = starts.get(flow)
        back, fwd = at.get((f["tid"], f["ts"])), s and at.get((s["tid"], s["ts"]))
        if not (s and back and fwd and f.get("bp") == "e"):
            wrong.append((flow, "unanchored"))
            continue
        a = back["args"]
        want = latest.get((a["Fwd thread id"], a["Sequence number"]))
        if want is None or want["ts"] != fwd["ts"] or fwd["args"].get("Sequence number") != a["Sequence number"]:
            wrong.append((back["name"], fwd["name"]))
    linked = [n for n in nodes if (n["args"]["Fwd thread id"], n["args"]["Sequence number"]) in latest]
    check(finishes and len(finishes) == len(starts) == len(linked) and not wrong,
          "fwdbwd flows in the Chrome export: one per backward node, from the forward op that created it "
          "(%d flows, %d backward nodes with a forward op; wrong: %s)" % (len(finishes), len(linked), wrong[:3]))


def edge_sums(calls, most=100000):
    """Every total of at most one change per call (0 included), up to `most` distinct totals."""
    sums = {0}
    for changes in calls:
        grown = sums | {s + c for s in sums for c in changes}
        if len(grown) > most:
            break
        sums = grown
    return sums


class TorchRuns:
    """What torch.profiler saw of workload.py, over as many runs as a check needs.

    torch 1.13 builds its operator tree and charges memory from whole-microsecond times, on any
    thread (docs/ANALYSIS.md, "Live recordings"), so some of its figures move between runs of the
    same script: in about one run in ten one row's memory or one backward operator's stack (which
    torch takes from the forward operator it finds by nesting) was not its usual one. A figure
    of profsh's that differs from torch's first run is compared with further runs, up to
    MOST in all, and passes if it equals torch's in one of them. Each run is independent, so a
    right figure fails only when torch is off on that same item in every run (about one in a
    thousand); a wrong one (memory charged to the parent op, a module frame missing) is torch's
    in no run and fails every time.
    """
    MOST = 3

    def __init__(self, workload):
        self.workload = workload
        self.docs = [self._run()]

    def _run(self):
        with tempfile.TemporaryDirectory(prefix="profsh_torch_") as work:
            ref = os.path.join(work, "torch.json")
            r = subprocess.run(WRAP + [PYTHON, self.workload, "torch", ref], capture_output=True, text=True, cwd=work,
                               timeout=600)
            check(r.returncode == 0, "torch.profiler ran the workload (%s)" % r.stderr[-300:])
            return json.load(open(ref)) if r.returncode == 0 else {"rows": [], "links": [], "modules": {}}

    def differing(self, items, agrees, what):
        """The items for which agrees(doc, item) holds in none of torch's runs."""
        left = [i for i in items if not any(agrees(doc, i) for doc in self.docs)]
        while left and len(self.docs) < self.MOST:
            print("     torch run %d: %d %s differed from torch's runs so far (%s)"
                  % (len(self.docs) + 1, len(left), what, left[:3]), flush=True)
            self.docs.append(self._run())
            left = [i for i in left if not agrees(self.docs[-1], i)]
        return left


def stack_groups_by_operator(groups):
    """(name, frames, count) triples as {name: {innermost frames: count}}, C functions' addresses
    masked (they differ between processes). The measured range's own start is left out: profsh's
    capture range begins by entering it, so its frames ran before recording began, while
    torch's profiler was already on."""
    out = {}
    for name, frames, count in groups:
        frames = tuple(ADDRESS.sub(" at 0x?>", f) for f in frames[:STACK_FRAMES])
        entering = any(inner.endswith("): __enter__") and re.match(r"workload\.py\(\d+\): main$", outer)
                       for inner, outer in zip(frames, frames[1:]))
        if name == "measured" or entering:
            continue
        out.setdefault(name, {})
        out[name][frames] = out[name].get(frames, 0) + count
    return out


def during_backward(frames):
    return any("<built-in method run_backward " in f for f in frames)


def same_groups(theirs, ours):
    """Whether an operator's stack groups are torch's, up to operators moved between the backward
    pass's own stack and a forward operator's. An operator run by a backward function takes its
    forward operator's stack (torch's _set_backward_stacktraces), others run during backward keep
    the backward pass's (run_backward's); torch tells them apart by its whole-microsecond nesting,
    which leaves a few out of their backward function in most runs and not the same ones from run
    to run, while profsh nests in nanoseconds (docs/ANALYSIS.md, "Nesting"). The stacks
    themselves must be the same, and so must every count but for such moves."""
    def split(groups):
        return ({k: c for k, c in groups.items() if not during_backward(k)},
                {k: c for k, c in groups.items() if during_backward(k)})

    (t_forward, t_backward), (o_forward, o_backward) = split(theirs), split(ours)
    if set(t_forward) != set(o_forward) or (t_backward and o_backward and set(t_backward) != set(o_backward)):
        return False
    if sum(theirs.values()) != sum(ours.values()) or len(t_backward) > 1 or len(o_backward) > 1:
        return theirs == ours
    moved = sum(t_backward.values()) - sum(o_backward.values())
    return sum(abs(o_forward[k] - t_forward[k]) for k in t_forward) == abs(moved)


def check_stack_groups(torch_runs, torch_form_groups, line_groups):
    """--with-stack=torch groups operators by their innermost frames as torch's own
    key_averages(group_by_stack_n=5) does: the same groups per operator, with the same counts."""
    ours = stack_groups_by_operator((n, f, c) for (n, f), c in torch_form_groups.items())

    def torch_groups(doc):
        return stack_groups_by_operator(doc["stack_groups"])

    ops = sorted(set(ours) | set(torch_groups(torch_runs.docs[0])))
    diff = torch_runs.differing(ops, lambda doc, op: same_groups(torch_groups(doc).get(op, {}), ours.get(op, {})),
                                "operators' stack groups")
    first = torch_groups(torch_runs.docs[0])
    check(not diff and len(ours) > 20,
          "--with-stack=torch groups operators by their innermost %d frames as torch's key_averages does (%d "
          "operators, %d groups; torch vs profsh: %s)"
          % (STACK_FRAMES, len(ours), sum(len(g) for g in ours.values()),
             [(op, first.get(op), ours.get(op)) for op in diff][:2]))
    # The comparison can tell: the executing-line form groups differently.
    lines = stack_groups_by_operator((n, f, c) for (n, f), c in line_groups.items())
    differ = [op for op in ops if lines.get(op) != first.get(op)]
    check(len(differ) > len(ops) // 2,
          "the default --with-stack (each frame at its executing line) groups differently from torch's on %d of "
          "%d operators" % (len(differ), len(ops)))


def record(profsh, workload, work, name, stack_option):
    """profsh's recording of workload.py's measured region, or None."""
    r = subprocess.run(WRAP + [profsh, "run", "--activities", "torch", "--record-shapes", stack_option, "--profile-memory",
                        "--with-flops", "--capture-range", "measured", "--no-table", "-o",
                        os.path.join(work, name + ".profsh"), "--", PYTHON, workload, "plain"],
                       capture_output=True, text=True, cwd=work, timeout=600)
    windows = glob.glob(os.path.join(work, name + ".*.profsh"))
    check(r.returncode == 0 and len(windows) == 1,
          "profsh recorded the measured region with %s (%s)" % (stack_option, r.stderr[-300:]))
    return windows[0] if len(windows) == 1 else None


def dump(profsh, work, window):
    """Rows per (name, shapes), backward-to-forward links, module frames per operator, and stack
    groups ((name, frames) -> count) of a recording."""
    script = os.path.join(work, "dump.lua")
    open(script, "w").write(DUMP)
    d = subprocess.run([profsh, script, window, str(STACK_FRAMES)], capture_output=True, text=True, timeout=300)
    check(d.returncode == 0, "the trace loads (%s)" % d.stderr[-300:])
    rows, links, modules, groups = {}, [], {}, {}
    for line in d.stdout.splitlines():
        f = line.split("\t")
        if f[0] == "R":
            rows[(f[1], f[2])] = (int(f[3]), int(f[4]), int(f[5]), int(f[6]))
        elif f[0] == "L":
            links.append([f[1], f[2]])
        elif f[0] == "M":
            modules.setdefault(f[1], set()).add(f[2])
        elif f[0] == "S":
            key = (f[1], tuple(x for x in f[3:] if x))
            groups[key] = groups.get(key, 0) + int(f[2])
    return rows, links, modules, groups


def main():
    profsh, here = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if subprocess.run(WRAP + [PYTHON, "-c", "import torch"], capture_output=True).returncode != 0:
        print("skip: torch is not installed for %s" % PYTHON)
        return 77
    if not WRAP and not os.path.exists(os.path.join(os.path.dirname(profsh), "libprofsh_torch.so")):
        print("FAIL the PyTorch operator source was not built (libtorch-dev, python3-dev)")
        return 1
    workload = os.path.join(here, "workload.py")
    torch_runs = TorchRuns(workload)
    torch_doc = torch_runs.docs[0]
    with tempfile.TemporaryDirectory(prefix="profsh_torch_") as work:
        window = record(profsh, workload, work, "p", "--with-stack")
        if not window:
            return 1
        rows, links, modules, line_groups = dump(profsh, work, window)
        torch_window = record(profsh, workload, work, "t", "--with-stack=torch")
        if not torch_window:
            return 1
        torch_form_groups = dump(profsh, work, torch_window)[3]
        chrome = os.path.join(work, "p.json")
        open(os.path.join(work, "export.lua"), "w").write("profsh.load(arg[1]):export_chrome_trace(arg[2])")
        e = subprocess.run([profsh, os.path.join(work, "export.lua"), window, chrome],
                           capture_output=True, text=True, timeout=300)
        check(e.returncode == 0, "the window exports as Chrome JSON (%s)" % e.stderr[-300:])
        check_flows(json.load(open(chrome))["traceEvents"])
    want = {(r["key"], r["shapes"]): r for r in torch_doc["rows"]}
    same = [k for k in want if k in rows and rows[k][0] == want[k]["count"]]
    missing = [k for k in want if k not in rows]
    extra = [k for k in rows if k not in want]
    wrong = [(k, want[k]["count"], rows[k][0]) for k in want if k in rows and rows[k][0] != want[k]["count"]]
    check(not missing and not extra and not wrong,
          "operator counts per (name, input shapes) equal torch.profiler's: %d of %d rows equal; missing %s; extra %s; "
          "different %s" % (len(same), len(want), missing[:3], extra[:3], wrong[:3]))
    # Per backward node name, the forward operators it links to. torch picks the first event
    # with the node's sequence number, ordered by whole-microsecond starts: aten::linear and the
    # aten::t it calls share one, and when both start in the same microsecond torch names either
    # (so compared with further torch runs, as above).
    def links_of(pairs):
        out = {}
        for backward, forward in pairs:
            out.setdefault(backward, collections.Counter())[forward] += 1
        return out

    ours = links_of(links)
    diff = torch_runs.differing(sorted(set(ours) | set(links_of(torch_doc["links"]))),
                                lambda doc, b: links_of(doc["links"]).get(b) == ours.get(b),
                                "backward nodes' forward operators")
    check(not diff and links,
          "backward operators link to the same forward operators as in one of %d torch run(s) (%d links; "
          "different: %s)" % (len(torch_runs.docs), len(links),
                              [(b, dict(links_of(torch_doc["links"]).get(b, {})), dict(ours.get(b, {})))
                               for b in diff][:3]))
    def torch_modules(doc, op):
        return set(doc["modules"].get(op, []))

    if not TORCH_STACKS:
        wrong = {op: sorted(modules.get(op, set())) for op, want in WORKLOAD_MODULES.items()
                 if modules.get(op, set()) != want}
        check(not wrong, "stacks hold the workload's nn.Module frames (torch records none here; wrong: %s)" % wrong)
    ops = sorted(set(modules) | set(torch_doc["modules"])) if TORCH_STACKS else []
    diff = torch_runs.differing(ops, lambda doc, op: torch_modules(doc, op) == modules.get(op, set()),
                                "operators' module frames")
    if TORCH_STACKS:
        check(not diff and modules,
              "stacks hold the same nn.Module frames as torch's, per operator (%d operators; torch vs profsh: %s)"
              % (len(modules), [(op, sorted(torch_modules(torch_doc, op)), sorted(modules.get(op, []))) for op in diff][:3]))
    if STACK_GROUPS and TORCH_STACKS:
        check_stack_groups(torch_runs, torch_form_groups, line_groups)
    # Allocated bytes per operator, on rows that allocate at least 64 KB. (Self memory is left
    # out: torch rounds event times to whole microseconds, so an allocation at an operator's last
    # microsecond may be its child's or not; profsh's times are in nanoseconds.) Besides torch's
    # further runs (TorchRuns), the bytes of allocations in the microsecond an operator starts or
    # ends (workload.py reports them per row) are allowed on top of 1%.
    # Also allowed: profsh having more by whole allocations torch dated a few microseconds before
    # one of the row's operators starts, or between the last other operator's start or end and
    # the call's start (a loaded machine widens torch's gap), one per operator call
    # (workload.py, edge_allocations),
    # as on machines where torch dates aten::mm's output before aten::mm starts in every run.
    def memory_agrees(doc, k):
        r = next((r for r in doc["rows"] if (r["key"], r["shapes"]) == k), None)
        if r is None:
            return False
        slack = 0.01 * abs(r["cpu_memory_usage"]) + r["boundary_bytes"]
        difference = rows[k][1] - r["cpu_memory_usage"]
        return any(abs(difference - moved) <= slack for moved in edge_sums(r.get("edge_bytes", [])))

    big = [k for k, r in want.items() if k in rows and abs(r["cpu_memory_usage"]) >= 65536]
    loose = sum(1 for k in big if want[k]["boundary_bytes"])
    far = [(k, want[k]["cpu_memory_usage"], rows[k][1])
           for k in torch_runs.differing(big, memory_agrees, "rows' allocated bytes")]
    compared = len(big)
    flops = [(k, r["flops"], rows[k][3]) for k, r in want.items() if k in rows and r["flops"] != rows[k][3]]
    counted = [k for k, r in want.items() if r["flops"] > 0]
    check(not flops and len(counted) >= 3,
          "FLOPs per (name, input shapes) equal torch's with_flops (%d rows with FLOPs; different: %s)"
          % (len(counted), flops[:3]))
    check(not far and compared > 10,
          "per-operator allocated bytes within 1%% of torch's profile_memory in one of %d torch run(s) (%d rows of "
          "64 KB or more, %d of them with allocations at an operator's first or last microsecond): %s"
          % (len(torch_runs.docs), compared, loose, far[:4]))
    print("torch: %d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
