#!/usr/bin/env python3
"""The torch.compile analyses on profsh's own recording of an unmodified torch.compile script.

tests/compile/compile_model.py (Inductor on the CPU: a graph break, a recompile, backward) runs
in the Debian 13 root (torch 2.6; the root has g++, so Inductor builds its C++ kernels) under
`profsh run --activities torch`. From that one trace, read back with profsh.load and recomputed
here from its events:
  - compile time counts each instant once: the whole-trace compile_time of graph_breaks() is the
    union of the "(dynamo_timed)" spans (nested ones, and those of Inductor's compile threads),
    each region's compile_time the union of the spans inside its calls;
  - every CompiledFunctionBackward is a backward instance of the region whose CompiledFunction
    its fwdbwd flow starts at (the link torch.profiler draws), and no note says a sequence
    number is missing; the resumption after the graph break is a nested region (depth 1), and
    both frames recompile once;
  - the compile report's step chart has no `nil` label and its bars add up to no more than the
    trace's span, and this CPU-only trace gets no GPU busy/idle chart (compile_report_checks.py;
    check_compile.py checks the same on traces with steps and with device work).

Usage: check_compile_live.py PROFSH TESTS_DIR PLUGIN_CACHE   (exit 77: no Debian 13 root)
"""
import csv
import os
import subprocess
import sys
import tempfile

from compile_report_checks import report_findings, union_length

PYTHON = "/usr/bin/python3"
failures = []

DUMP = r'''
local path, out = ...
local t = profsh.load(path)
local f = assert(io.open(out .. "/events.tsv", "w"))
for _, e in ipairs(t:events{limit = 100000000}) do
  local seq = e.args and e.args["Sequence number"]
  f:write(table.concat({e.ph, e.cat or "", e.name, tostring(e.pid), tostring(e.tid),
                        ("%.3f"):format(e.ts), ("%.3f"):format(e.dur or 0),
                        seq and tostring(seq) or "", e.id and tostring(e.id) or ""}, "\t"), "\n")
end
f:close()
local regions = t:compile_regions()
regions:to_csv(out .. "/regions.csv")
local g = t:graph_breaks()
g:to_csv(out .. "/steps.csv")
g.recompiles:to_csv(out .. "/recompiles.csv")
local n = assert(io.open(out .. "/notes.txt", "w"))
for _, note in ipairs(regions.notes) do n:write(note, "\n") end
n:close()
local s = assert(io.open(out .. "/span.txt", "w"))
s:write(("%.3f"):format(t.duration))
s:close()
'''


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def close(a, b, tol=0.01):
    try:
        return abs(float(a) - float(b)) <= tol
    except ValueError:  # an empty cell
        return False


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def analyse(profsh, trace, work):
    script = os.path.join(work, "dump.lua")
    with open(script, "w") as f:
        f.write(DUMP)
    r = subprocess.run([profsh, script, trace, work], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("profsh failed on %s: %s" % (trace, r.stderr))
    events = []
    with open(os.path.join(work, "events.tsv")) as f:
        for line in f:
            ph, cat, name, pid, tid, ts, dur, seq, flow = line.rstrip("\n").split("\t")
            events.append({"ph": ph, "cat": cat, "name": name, "pid": pid, "tid": tid,
                           "ts": float(ts), "end": float(ts) + float(dur),
                           "seq": int(seq) if seq else None, "id": flow})
    notes = open(os.path.join(work, "notes.txt")).read()
    span = float(open(os.path.join(work, "span.txt")).read())
    return (events, read_csv(os.path.join(work, "regions.csv")),
            read_csv(os.path.join(work, "steps.csv")), read_csv(os.path.join(work, "recompiles.csv")),
            notes, span)


def inside(inner, outer):
    return (inner is not outer and inner["pid"] == outer["pid"] and inner["tid"] == outer["tid"]
            and outer["ts"] <= inner["ts"] and inner["end"] <= outer["end"])


def innermost(e, candidates):
    best = None
    for c in candidates:
        if inside(e, c) and (best is None or c["end"] - c["ts"] < best["end"] - best["ts"]):
            best = c
    return best


def check_live_trace(profsh, trace, work):
    events, regions_rows, steps_rows, recompiles, notes, span = analyse(profsh, trace, work)
    cpu = [e for e in events if e["ph"] == "X"]
    compile_spans = [e for e in cpu if e["name"].endswith("(dynamo_timed)")]
    regions = [e for e in cpu if e["name"].startswith("Torch-Compiled Region: ")]
    forwards = [e for e in cpu if e["name"] == "CompiledFunction"]
    backwards = [e for e in cpu if e["name"] == "CompiledFunctionBackward"]
    check(len(regions) == 12 and len(forwards) == 12 and len(backwards) == 12,
          "the recording holds 12 region calls, 12 CompiledFunction, 12 CompiledFunctionBackward "
          "(%d, %d, %d)" % (len(regions), len(forwards), len(backwards)))

    # Compile time, counted once.
    union = union_length([(e["ts"], e["end"]) for e in compile_spans])
    summed = sum(e["end"] - e["ts"] for e in compile_spans)
    check(summed > 1.5 * union, "the compile spans nest (their sum %.0f us is over 1.5 times their "
          "union %.0f us): the case where summing counts time again" % (summed, union))
    total = sum(float(r["compile_time"]) for r in steps_rows)
    check(close(total, union, 0.01 * max(1, len(steps_rows))),
          "graph_breaks: compile time %.3f us is the union of the compile spans %.3f us" % (total, union))
    check(len(steps_rows) == 1 and steps_rows[0]["step"] == "" and close(steps_rows[0]["step_time"], span)
          and close(steps_rows[0]["run_time"], span - union, 0.02),
          "graph_breaks: no steps, one row for the whole trace: step_time is the span, run_time the "
          "span less compile time (%s)" % steps_rows)

    # Backward linked to forward: the fwdbwd flow that ends at a CompiledFunctionBackward starts
    # at its CompiledFunction; the backward belongs to the innermost region around that.
    flow_start = {e["id"]: e for e in events if e["cat"] == "fwdbwd" and e["ph"] == "s"}
    flow_end = {(e["pid"], e["tid"], round(e["ts"], 3)): e for e in events
                if e["cat"] == "fwdbwd" and e["ph"] == "f"}
    expect = {}
    linked = same_sequence = 0
    for b in backwards:
        f = flow_end.get((b["pid"], b["tid"], round(b["ts"], 3)))
        s = flow_start.get(f["id"]) if f else None
        fwd = [c for c in forwards if s is not None and c["pid"] == s["pid"] and c["tid"] == s["tid"]
               and close(c["ts"], s["ts"], 0.0005)]
        if len(fwd) != 1:
            continue
        linked += 1
        same_sequence += fwd[0]["seq"] == b["seq"]
        region = innermost(fwd[0], regions)
        key = (region["name"], "backward")
        expect[key] = expect.get(key, 0) + 1
    check(linked == same_sequence == len(backwards), "every CompiledFunctionBackward has a fwdbwd "
          "flow from a CompiledFunction with its sequence number (%d, %d of %d)"
          % (linked, same_sequence, len(backwards)))
    for r in regions:
        key = (r["name"], "forward")
        expect[key] = expect.get(key, 0) + 1
    got = {}
    for row in regions_rows:
        key = (row["region"], row["pass"])
        got[key] = got.get(key, 0) + int(row["calls"])
    check(got == expect, "compile_regions: calls per (region, pass) as the flows link them"
          + ("" if got == expect else "\n  got  %s\n  want %s" % (sorted(got.items()), sorted(expect.items()))))
    check("sequence number is missing" not in notes, "no note of an unlinked backward (%s)" % notes.strip())

    # Each region's compile time: the union of the compile spans whose innermost instance
    # (region call or backward) is one of its calls.
    instances = regions + backwards
    owner = {id(b): ("backward", innermost(fwd, regions)["name"]) for b in backwards
             for fwd in [max((c for c in forwards if c["seq"] == b["seq"] and c["ts"] <= b["ts"]),
                             key=lambda c: c["ts"])]}
    for r in regions:
        owner[id(r)] = ("forward", r["name"])
    spans = {}
    for c in compile_spans:
        holder = innermost(c, instances)
        if holder is not None:
            spans.setdefault(id(holder), []).append((c["ts"], c["end"]))
    want_compile = {}
    for i in instances:
        p, name = owner[id(i)]
        want_compile[(name, p)] = want_compile.get((name, p), 0.0) + union_length(spans.get(id(i), []))
    for row in regions_rows:
        key = (row["region"], row["pass"])
        check(close(row["compile_time"], want_compile.get(key, -1), 0.01 * int(row["calls"])),
              "compile_regions %s: compile_time %s is the union of the spans in its calls (%.3f)"
              % (key, row["compile_time"], want_compile.get(key, -1)))

    # The graph break and the recompiles.
    depth = {(row["region"], row["pass"]): row["depth"] for row in regions_rows}
    check(all(d == ("1" if name.split(": ")[1].startswith("1/") else "0") for (name, _), d in depth.items()),
          "frame 1 (the resumption after the break) runs nested in frame 0: depth 1 (%s)" % depth)
    check(steps_rows and steps_rows[0]["graph_breaks"] == "6" and steps_rows[0]["regions"] == "12",
          "graph_breaks: 6 of 12 region calls are resumptions")
    check(sorted((r["frame"], r["recompile"]) for r in recompiles) == [("0", "1"), ("1", "1")],
          "recompiles: frames 0 and 1, once each (%s)" % [(r["frame"], r["recompile"]) for r in recompiles])


def main():
    profsh, tests_dir, cache = (os.path.abspath(a) for a in sys.argv[1:4])
    here = os.path.join(tests_dir, "compile")
    root = subprocess.run([os.path.join(tests_dir, "torch2", "debian13_root.sh")],
                          capture_output=True, text=True)
    if root.returncode != 0:
        print("skip: no Debian 13 root (%s)" % root.stderr.strip()[-200:])
        return 77
    root_dir = root.stdout.strip()
    with tempfile.TemporaryDirectory(prefix="profsh_compile_live_") as work:
        trace = os.path.join(work, "live.profsh")
        env = dict(os.environ, PROFSH_CACHE=cache, PROFSH_TORCH_PREBUILT="0")
        r = subprocess.run([os.path.join(tests_dir, "torch2", "in_root.sh"), root_dir, profsh, "run",
                            "--activities", "torch", "--no-table", "-o", trace, "--", PYTHON,
                            os.path.join(here, "compile_model.py")],
                           capture_output=True, text=True, env=env, timeout=1200)
        summary = [line for line in r.stderr.splitlines() if "operators:" in line]
        print("     " + (summary[-1] if summary else r.stderr.strip()[-300:]))
        check(r.returncode == 0 and os.path.exists(trace),
              "profsh run --activities torch recorded the compiled model (%s)" % r.stderr.strip()[-300:])
        if r.returncode != 0 or not os.path.exists(trace):
            return 1
        check_live_trace(profsh, trace, work)
        for finding in report_findings(profsh, trace, work, "live", cpu_only=True):
            check(*finding)
    print("%d failure(s)" % len(failures) if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
