#!/usr/bin/env python3
"""Checks trace:compile_regions(), trace:graph_breaks() and trace:kernel_provenance().

1. On a real torch.compile trace recorded with PyTorch 2.6 (scripts/samples/torch_compile_cpu.json.gz, made by
   tests/compile/record_compile.py: a graph break, a recompile, backward, Inductor's C++ kernels), every number
   is computed here again from the JSON with Python alone, by interval containment per thread
   (docs/ANALYSIS.md, "torch.compile"), and profsh's rows must agree.
2. On a synthetic Kineto trace of a compiled region launching triton kernels on a GPU, written
   here with hand-computed answers: device busy and idle time, host waits, launch delays, kernels
   shorter than their launch, the verdict, and the kernel provenance shares.
3. On the shared triton example trace (a real GPU trace of one compiled region).
4. A backward whose fwdbwd flow and sequence number disagree; a trace written as operators end
   (profsh's own recordings), with nested compile spans.
5. The compile report of the sample, the end-order trace and the triton example
   (compile_report_checks.py): the step chart's labels and total, the GPU chart where it belongs.

Usage: check_compile.py PROFSH SAMPLES_DIR TRACES_DIR
"""
import csv
import gzip
import json
import os
import subprocess
import sys
import tempfile

from compile_report_checks import report_findings, union_length

LUA = r'''
local path, out = ...
local t = profsh.load(path)
t:compile_regions():to_csv(out .. "/regions.csv")
local g = t:graph_breaks()
g:to_csv(out .. "/steps.csv")
g.islands:to_csv(out .. "/islands.csv")
g.recompiles:to_csv(out .. "/recompiles.csv")
t:kernel_provenance():to_csv(out .. "/provenance.csv")
'''

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def close(a, b, tol=0.002):
    try:
        return abs(float(a) - float(b)) <= tol
    except ValueError:  # an empty cell
        return False


def run_profsh(profsh, trace):
    with tempfile.TemporaryDirectory() as out:
        script = os.path.join(out, "q.lua")
        with open(script, "w") as f:
            f.write(LUA)
        r = subprocess.run([profsh, script, trace, out], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("profsh failed on %s: %s" % (trace, r.stderr))
        result = {}
        for name in ("regions", "steps", "islands", "recompiles", "provenance"):
            with open(os.path.join(out, name + ".csv"), newline="") as f:
                result[name] = list(csv.DictReader(f))
        return result


def load_events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    return [e for e in doc["traceEvents"] if e.get("ph") == "X"], doc


def inside(inner, outer):
    return (inner is not outer and inner["tid"] == outer["tid"] and outer["ts"] <= inner["ts"]
            and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"])


def innermost(e, candidates):
    best = None
    for c in candidates:
        if inside(e, c) and (best is None or c["dur"] < best["dur"]):
            best = c
    return best


def check_real_cpu_trace(profsh, path):
    events, _ = load_events(path)
    cpu = [e for e in events if e.get("cat") in ("cpu_op", "user_annotation")]
    steps = sorted(((int(e["name"].split("#")[1]), e["ts"], e["ts"] + e["dur"]) for e in cpu
                    if e["name"].startswith("ProfilerStep#")), key=lambda s: s[1])
    begin = min(e["ts"] for e in events)

    def step_of(ts):
        for n, a, b in steps:
            if a <= ts < b:
                return n
        return None

    regions = [e for e in cpu if e["name"].startswith("Torch-Compiled Region: ")]
    forwards = [e for e in cpu if e["name"] == "CompiledFunction"]
    backwards = [e for e in cpu if e["name"] == "CompiledFunctionBackward"]
    compile_work = [e for e in cpu if e["name"].endswith("(dynamo_timed)")]
    top_compile = [c for c in compile_work if not any(inside(c, o) for o in compile_work)]
    guards = [e for e in cpu if e["name"] == "TorchDynamo Cache Lookup"]
    cpp_kernels = [e for e in cpu if "cpp_fused_" in e["name"]]
    check(len(regions) == 12 and len(backwards) == 12 and len(cpp_kernels) == 45,
          "the recorded trace is not the one this test expects")
    with tempfile.TemporaryDirectory() as d:
        for finding in report_findings(profsh, path, d, "sample", cpu_only=True):
            check(*finding)

    # Instances: each region call, and each backward given its forward's innermost region.
    instances = []
    for r in regions:
        depth = sum(1 for o in regions if inside(r, o))
        instances.append({"event": r, "region": r["name"], "pass": "forward", "depth": depth})
    for b in backwards:
        seq = b["args"]["Sequence number"]
        fwd = max((f for f in forwards if f["args"].get("Sequence number") == seq
                   and f["ts"] <= b["ts"]), key=lambda f: f["ts"])
        region = innermost(fwd, regions)
        depth = sum(1 for o in regions if inside(region, o))
        instances.append({"event": b, "region": region["name"], "pass": "backward", "depth": depth})
    inst_events = [i["event"] for i in instances]
    by_event = {id(i["event"]): i for i in instances}
    for i in instances:
        i.update(kernels=0, compile=0.0)
    for k in cpp_kernels:
        by_event[id(innermost(k, inst_events))]["kernels"] += 1
    for c in top_compile:
        holder = innermost(c, inst_events)
        if holder is not None:
            by_event[id(holder)]["compile"] += c["dur"]

    groups = {}
    for i in instances:
        key = (i["region"], i["pass"], step_of(i["event"]["ts"]))
        g = groups.setdefault(key, {"calls": 0, "cpu": 0.0, "compile": 0.0, "kernels": 0,
                                    "depth": i["depth"]})
        g["calls"] += 1
        g["cpu"] += i["event"]["dur"]
        g["compile"] += i["compile"]
        g["kernels"] += i["kernels"]

    got = run_profsh(profsh, path)
    rows = got["regions"]
    check(len(rows) == len(groups), "regions: %d rows, expected %d" % (len(rows), len(groups)))
    for row in rows:
        key = (row["region"], row["pass"], int(row["step"]) if row["step"] else None)
        g = groups.get(key)
        if g is None:
            failures.append("regions: unexpected row %s" % (key,))
            continue
        frame, recompile = row["region"].split(": ")[1].split("/")
        check(row["frame"] == frame and row["recompile"] == recompile, "frame/recompile %s" % (key,))
        check(int(row["calls"]) == g["calls"], "calls %s" % (key,))
        check(close(row["cpu_time"], g["cpu"]), "cpu_time %s: %s vs %s" % (key, row["cpu_time"], g["cpu"]))
        check(close(row["compile_time"], g["compile"]), "compile_time %s: %s vs %s" % (key, row["compile_time"], g["compile"]))
        check(int(row["kernels"]) == g["kernels"], "kernels %s: %s vs %s" % (key, row["kernels"], g["kernels"]))
        check(int(row["depth"]) == g["depth"], "depth %s" % (key,))
        check(row["verdict"] == "no device work", "verdict %s" % (key,))

    # Per step: compile time, guards, regions, graph breaks (nested regions), recompiles.
    first_seen = {}
    for r in sorted(regions, key=lambda e: e["ts"]):
        frame, recompile = map(int, r["name"].split(": ")[1].split("/"))
        if recompile >= 1:
            first_seen.setdefault((frame, recompile), r)
    steps_rows = {int(r["step"]): r for r in got["steps"]}
    check(sorted(steps_rows) == [s[0] for s in steps], "graph_breaks: steps %s" % sorted(steps_rows))
    for n, a, b in steps:
        row = steps_rows.get(n)
        if row is None:
            continue
        in_step = lambda e: a <= e["ts"] < b  # noqa: E731
        # The union of every compile span, clipped to the step (each instant counted once).
        compile_time = union_length([(max(a, c["ts"]), min(b, c["ts"] + c["dur"])) for c in compile_work
                                     if c["ts"] < b and c["ts"] + c["dur"] > a])
        check(close(row["compile_time"], compile_time, 0.01), "step %d compile_time" % n)
        check(close(row["step_time"], b - a), "step %d step_time %s vs %s" % (n, row["step_time"], b - a))
        check(close(row["run_time"], b - a - compile_time, 0.01), "step %d run_time" % n)
        check(close(row["guard_time"], sum(g["dur"] for g in guards if in_step(g)), 0.01),
              "step %d guard_time" % n)
        check(int(row["regions"]) == sum(1 for r in regions if in_step(r)), "step %d regions" % n)
        breaks = sum(1 for r in regions if in_step(r) and any(inside(r, o) for o in regions))
        check(int(row["graph_breaks"]) == breaks == 1, "step %d graph_breaks" % n)
        check(int(row["recompiles"]) == sum(1 for r in first_seen.values() if in_step(r)),
              "step %d recompiles" % n)

    recompiles = got["recompiles"]
    check([(int(r["frame"]), int(r["recompile"])) for r in recompiles] == [(0, 1), (1, 1)],
          "recompiles: %s" % [(r["frame"], r["recompile"]) for r in recompiles])
    for r in recompiles:
        first = first_seen[(int(r["frame"]), int(r["recompile"]))]
        check(int(r["step"]) == step_of(first["ts"]) == 3, "recompile step")
        check(close(r["start"], first["ts"] - begin), "recompile start %s vs %s" % (r["start"], first["ts"] - begin))
        before = [c for c in top_compile if c["tid"] == first["tid"]
                  and c["ts"] + c["dur"] <= first["ts"]]
        latest = max(before, key=lambda c: c["ts"] + c["dur"])
        check(close(r["compile_time"], latest["dur"]), "recompile compile_time")

    # Eager islands inside regions: operators in a region, outside its compiled code, its nested
    # regions, guards and compile work (here: Tensor.__bool__'s aten::is_nonzero, each step).
    shielded = forwards + backwards + guards + compile_work + cpp_kernels
    eager_in_regions = []
    for e in cpu:
        if e.get("cat") != "cpu_op" or e in regions or e in shielded:
            continue
        holder = innermost(e, regions)
        if holder is None or any(inside(e, s) for s in shielded):
            continue
        if any(inside(e, o) for o in cpu if o.get("cat") == "cpu_op" and o not in regions):
            continue
        eager_in_regions.append(e)
    got_in_regions = [r for r in got["islands"] if r["region"]]
    check(len(got_in_regions) == len(eager_in_regions) == 6,
          "islands in regions: %d, expected %d" % (len(got_in_regions), len(eager_in_regions)))
    for r, e in zip(got_in_regions, sorted(eager_in_regions, key=lambda e: e["ts"])):
        check(r["first_op"] == e["name"] == "aten::is_nonzero", "island op %s" % r["first_op"])
        check(close(r["op_time"], e["dur"]), "island time")
        check(r["region"] == innermost(e, regions)["name"], "island region")
    total_islands = sum(int(r["eager_islands"]) for r in got["steps"])
    check(total_islands == len(got["islands"]), "eager_islands totals")

    # Provenance on the CPU: Inductor's C++ kernels, and the operators directly inside
    # CompiledFunction(Backward) (Inductor's extern calls such as aten::mm).
    extern = [e for e in cpu if e.get("cat") == "cpu_op" and e not in cpp_kernels
              and (p := innermost(e, cpu)) is not None
              and p["name"] in ("CompiledFunction", "CompiledFunctionBackward")]
    prov = {r["provenance"]: r for r in got["provenance"]}
    check(set(prov) == {"inductor C++ kernel", "ATen fallback in compiled code"},
          "provenance rows %s" % sorted(prov))
    if len(prov) == 2:
        k, x = prov["inductor C++ kernel"], prov["ATen fallback in compiled code"]
        check(int(k["kernels"]) == len(cpp_kernels), "C++ kernel count")
        check(int(x["kernels"]) == len(extern), "extern call count %s vs %d" % (x["kernels"], len(extern)))
        total = sum(e["dur"] for e in cpp_kernels) + sum(e["dur"] for e in extern)
        check(close(k["time"], sum(e["dur"] for e in cpp_kernels)), "C++ kernel time")
        check(close(k["percentage"], round(100 * sum(e["dur"] for e in cpp_kernels) / total, 2), 0.011),
              "C++ kernel share")


def synthetic_gpu_trace(path):
    """One compiled region (step 1) launching four triton kernels and a cuBLAS gemm.

    Host: region [100, 400) on tid 1; CompiledFunction [105, 395) inside it; launches
    (cuLaunchKernel) at 110 (dur 20), 140 (20), 300 (20), 330 (20), 360 (20).
    Device: kernels [150, 160), [165, 175), [320, 330), [355, 365), [385, 425).
      busy = 10 + 10 + 10 + 10 + 40 = 80; window [150, 425) = 275, so idle = 195.
      gaps: 160->165 (5, launch at 140 < 160: not a host wait), 175->320 (145, launch at 300
      >= 175: host wait), 330->355 (25, launch 330 >= 330: host wait), 365->385 (20, launch 360
      < 365: not). host_wait = 170, share = 170/195 = 0.8718.
      launch delays: 40, 25, 20, 25, 25 -> mean 27.0; kernels shorter than their 20 us launch:
      the four 10 us ones.
    Verdict: idle > busy and host waits >= half the idle time -> CPU-bound.
    Provenance: 2 pointwise (20 us), 1 reduction (10), 1 persistent (10), 1 gemm (40 of 80).
    """
    events = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1,
               "ts": 90, "dur": 400},
              {"ph": "X", "cat": "cpu_op", "name": "Torch-Compiled Region: 0/0", "pid": 1,
               "tid": 1, "ts": 100, "dur": 300},
              {"ph": "X", "cat": "cpu_op", "name": "CompiledFunction", "pid": 1, "tid": 1,
               "ts": 105, "dur": 290, "args": {"Sequence number": 7}}]
    kernels = [("triton_poi_fused_add_0", 110, 150, 10), ("triton_poi_fused_mul_1", 140, 165, 10),
               ("triton_red_fused_sum_2", 300, 320, 10), ("triton_per_fused_norm_3", 330, 355, 10),
               ("sm80_xmma_gemm_f32f32_tn", 360, 385, 40)]
    for corr, (name, launch, start, dur) in enumerate(kernels, 1):
        events.append({"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 1,
                       "tid": 1, "ts": launch, "dur": 20, "args": {"correlation": corr}})
        events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": start,
                       "dur": dur, "args": {"correlation": corr, "device": 0, "stream": 7}})
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": events}, f)


def check_synthetic_gpu(profsh):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "gpu_compile.json")
        synthetic_gpu_trace(path)
        got = run_profsh(profsh, path)
    rows = got["regions"]
    check(len(rows) == 1, "synthetic: %d region rows" % len(rows))
    if rows:
        r = rows[0]
        check(r["step"] == "1" and r["calls"] == "1" and r["kernels"] == "5", "synthetic counts %s" % r)
        check(close(r["gpu_busy"], 80) and close(r["gpu_idle"], 195), "synthetic busy/idle %s" % r)
        check(close(r["host_wait_share"], 0.8718, 1e-4), "synthetic host wait %s" % r["host_wait_share"])
        check(close(r["mean_launch_delay"], 27.0), "synthetic launch delay %s" % r["mean_launch_delay"])
        check(r["short_kernels"] == "4", "synthetic short kernels %s" % r["short_kernels"])
        check(r["verdict"] == "CPU-bound: consider CUDA graphs (mode='reduce-overhead')",
              "synthetic verdict %s" % r["verdict"])
    prov = {(r["device"], r["provenance"]): r for r in got["provenance"]}
    expect = {"inductor pointwise": (2, 20, 25.0), "inductor reduction": (1, 10, 12.5),
              "inductor persistent reduction": (1, 10, 12.5), "cuBLAS": (1, 40, 50.0)}
    check(set(p for _, p in prov) == set(expect), "synthetic provenance %s" % sorted(prov))
    for name, (count, time, pct) in expect.items():
        r = prov.get(("gpu", name))
        if r:
            check(int(r["kernels"]) == count and close(r["time"], time) and close(r["percentage"], pct),
                  "synthetic provenance %s: %s" % (name, r))
    check(got["islands"] == [], "synthetic: no eager islands expected")


def check_flow_link(profsh):
    """A backward goes to the forward its fwdbwd flow starts at, not the latest forward with its
    sequence number: sequence numbers count per thread, so two threads' forwards share one.

    Thread 1: region 0/0 [100, 200) holding CompiledFunction seq 5 at 110; its backward at 400.
    Thread 2: region 1/0 [250, 350) holding CompiledFunction seq 5 at 260 (later, same number).
    The flow from thread 1's forward (ts 110) ends at the backward (thread 1, ts 400).
    """
    def x(name, tid, ts, dur, args=None):
        e = {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur}
        if args:
            e["args"] = args
        return e
    events = [x("Torch-Compiled Region: 0/0", 1, 100, 100), x("CompiledFunction", 1, 110, 50, {"Sequence number": 5}),
              x("Torch-Compiled Region: 1/0", 2, 250, 100), x("CompiledFunction", 2, 260, 50, {"Sequence number": 5}),
              x("CompiledFunctionBackward", 1, 400, 50, {"Sequence number": 5, "Fwd thread id": 1}),
              {"ph": "s", "cat": "fwdbwd", "name": "fwdbwd", "id": 9, "pid": 1, "tid": 1, "ts": 110},
              {"ph": "f", "cat": "fwdbwd", "name": "fwdbwd", "id": 9, "pid": 1, "tid": 1, "ts": 400, "bp": "e"}]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "flows.json")
        with open(path, "w") as f:
            json.dump({"schemaVersion": 1, "traceEvents": events}, f)
        got = run_profsh(profsh, path)
    backward = [(r["region"], r["calls"]) for r in got["regions"] if r["pass"] == "backward"]
    check(backward == [("Torch-Compiled Region: 0/0", "1")],
          "flow link: the backward belongs to the region its fwdbwd flow starts in, %s" % backward)


def check_end_order(profsh):
    """A trace written as operators end (profsh's own recordings: children before their parent),
    with nested compile spans and no fwdbwd flows (the sequence numbers link backward).

    Region 0/0 [100, 1000) holds compile_inner [110, 500) (holding call_user_compiler
    [120, 480)), CompiledFunction seq 3 [510, 600) and region 1/0 [610, 900) (a graph break's
    resumption) with CompiledFunction seq 4 [620, 700). Then CompiledFunctionBackward seq 4
    [1100, 1200) compiling lazily [1110, 1190), and CompiledFunctionBackward seq 3 [1300, 1400).
    Compile time: union 390 + 80 = 470 (the spans sum to 830); the span is 1300, run 830.
    """
    def x(name, ts, end, seq=None):
        e = {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": end - ts}
        if seq is not None:
            e["args"] = {"Sequence number": seq}
        return e
    events = [x("OutputGraph.call_user_compiler (dynamo_timed)", 120, 480),
              x("_compile.compile_inner (dynamo_timed)", 110, 500), x("CompiledFunction", 510, 600, 3),
              x("CompiledFunction", 620, 700, 4), x("Torch-Compiled Region: 1/0", 610, 900),
              x("Torch-Compiled Region: 0/0", 100, 1000),
              x("compile_fx.<locals>.bw_compiler (dynamo_timed)", 1110, 1190),
              x("CompiledFunctionBackward", 1100, 1200, 4), x("CompiledFunctionBackward", 1300, 1400, 3)]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "end_order.json")
        with open(path, "w") as f:
            json.dump({"schemaVersion": 1, "traceEvents": events}, f)
        got = run_profsh(profsh, path)
        for finding in report_findings(profsh, path, d, "end order", cpu_only=True):
            check(*finding)
    rows = {(r["region"], r["pass"]): r for r in got["regions"]}
    want = {("Torch-Compiled Region: 0/0", "forward"): ("0", 390), ("Torch-Compiled Region: 1/0", "forward"): ("1", 0),
            ("Torch-Compiled Region: 1/0", "backward"): ("1", 80), ("Torch-Compiled Region: 0/0", "backward"): ("0", 0)}
    check(set(rows) == set(want), "end order: region rows %s" % sorted(rows))
    for key, (depth, compile_time) in want.items():
        r = rows.get(key)
        check(r is not None and r["depth"] == depth and close(r["compile_time"], compile_time),
              "end order: %s depth %s, compile_time %s (%s)" % (key, depth, compile_time, r))
    steps = got["steps"]
    check(len(steps) == 1 and steps[0]["step"] == "" and close(steps[0]["step_time"], 1300)
          and close(steps[0]["compile_time"], 470) and close(steps[0]["run_time"], 830)
          and steps[0]["graph_breaks"] == "1",
          "end order: one row for the whole trace, compile time the union of the spans %s" % steps)


def check_triton_example(profsh, traces_dir):
    path = os.path.join(traces_dir, "triton_example_triton_example.json.gz")
    if not os.path.exists(path):
        print("skipped: %s is missing" % path)
        return
    got = run_profsh(profsh, path)
    with tempfile.TemporaryDirectory() as d:
        for finding in report_findings(profsh, path, d, "triton example", cpu_only=False):
            check(*finding)
    rows = got["regions"]
    check(len(rows) == 1 and rows[0]["region"] == "Torch-Compiled Region: 0/0"
          and rows[0]["kernels"] == "1" and close(rows[0]["gpu_busy"], 1.76),
          "triton example regions %s" % rows)
    check([(r["provenance"], r["kernels"]) for r in got["provenance"]] == [("inductor pointwise", "1")],
          "triton example provenance %s" % got["provenance"])
    # The CPU side of a triton launch is compiled code, not an eager island.
    check(got["islands"] == [], "triton example islands %s" % got["islands"])


def main():
    profsh, samples_dir = sys.argv[1], sys.argv[2]
    traces_dir = sys.argv[3]
    check_real_cpu_trace(profsh, os.path.join(samples_dir, "torch_compile_cpu.json.gz"))
    check_synthetic_gpu(profsh)
    check_flow_link(profsh)
    check_end_order(profsh)
    check_triton_example(profsh, traces_dir)
    if failures:
        print("\n".join(failures[:40]))
        sys.exit(1)
    print("compile analyses: all checks passed")


if __name__ == "__main__":
    main()
