#!/usr/bin/env python3
"""Checks profsh's TensorBoard memory and module views against the plugin's goldens.
usage: check_views_more.py PROFSH GOLDEN_DIR RUNS_DIR
For every worker folder of GOLDEN_DIR with a memory.json or module.json (the plugin's answer, recorded by
record_golden.py or record_runs_golden.py), finds the worker's trace (RUNS_DIR/RUN/WORKER*.json*
or the plugin's sample runs, span N being the worker's Nth file by name), runs
dump_views_more.lua on it and compares, in the plugin's units (KB, MB, ms) and rounding:
- memory.json: per device, every operator row (calls, sizes and counts with and without children);
- memory_events.json: per device, every allocation in the plugin's order (operator, size, times);
- memory_curve.json: per device, every point before the plugin's step-plot patch, and the peak;
- module.json: the module tree in pre-order, every module's figures (µs, the plugin's ints).
Exit 77 (skipped) when the plugin's sample runs cannot be found and no run of RUNS_DIR matches.
"""
import csv
import glob
import json
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tb_harness  # noqa: E402

KB, MB = 1024.0, 1024.0 * 1024.0


def display_round(v):
    """utils.DisplayRounder(ndigits=2)."""
    if v == 0 or abs(v) >= 0.01:
        return round(v, 2)
    return round(v, abs(math.floor(math.log10(abs(v)))))


def close(a, b, tol):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= tol


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def num(s):
    return None if s == "" else float(s)


def trace_of(run, worker_span, runs_dir, samples):
    worker, _, span = worker_span.partition(".")
    for base in (os.path.join(runs_dir, run), os.path.join(samples, run) if samples else None):
        if not base or not os.path.isdir(base):
            continue
        files = sorted(glob.glob(os.path.join(base, worker + ".*pt.trace.json*")))
        if not files:
            continue
        index = int(span) - 1 if span.isdigit() else 0
        return files[index] if index < len(files) else None
    return None


def check_worker(profsh, folder, trace, failures):
    with tempfile.TemporaryDirectory() as out:
        r = subprocess.run([profsh, os.path.join(os.path.dirname(__file__), "dump_views_more.lua"),
                            trace, out], capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(f"{folder}: profsh failed: {r.stderr.strip()}")
            return
        ops = read_csv(os.path.join(out, "memory_operators.csv"))
        curve = read_csv(os.path.join(out, "memory_curve.csv"))
        allocs = read_csv(os.path.join(out, "memory_allocations.csv"))
        devices = read_csv(os.path.join(out, "memory_devices.csv"))
        modules = read_csv(os.path.join(out, "modules.csv"))
    fail = lambda what: failures.append(f"{folder}: {what}")  # noqa: E731

    module_json = os.path.join(folder, "module.json")
    if os.path.exists(module_json):
        want = []

        def walk(nodes, depth):
            for n in nodes:
                want.append([depth, n["name"], n["id"], n["occurences"], n["operators"],
                             n["host_duration"], n["self_host_duration"], n["device_duration"],
                             n["self_device_duration"], n["avg_duration"]])
                walk(n["children"], depth + 1)
        walk(json.load(open(module_json))["data"], 0)
        mine = [[int(m["depth"]), m["name"], int(m["id"]), int(m["occurrences"]),
                 int(m["operators"])] + [float(m[k]) for k in (
                     "host_duration", "self_host_duration", "device_duration",
                     "self_device_duration", "avg_duration")] for m in modules]
        if len(mine) != len(want):
            fail(f"module: {len(mine)} modules, the plugin {len(want)}")
        for m, g in zip(mine, want):
            if m[:5] != g[:5] or not all(close(a, b, 0.01) for a, b in zip(m[5:], g[5:])):
                fail(f"module: {m} != plugin {g}")
    elif modules:
        fail(f"module: {len(modules)} modules where the plugin has none")
    if not os.path.exists(os.path.join(folder, "memory.json")):
        return

    stats = json.load(open(os.path.join(folder, "memory.json")))
    for device, rows in stats["rows"].items():
        mine = [o for o in ops if o["device"] == device]
        if len(mine) != len(rows):
            fail(f"memory {device}: {len(mine)} operators, the plugin {len(rows)}")
            continue
        for m, g in zip(mine, rows):
            want = [m["name"], int(m["calls"])] + [
                display_round(int(m[k]) / KB) if k.endswith(("increase", "size")) else int(m[k])
                for k in ("size_increase", "self_size_increase", "allocation_count",
                          "self_allocation_count", "allocation_size", "self_allocation_size")]
            if want[:2] != g[:2] or not all(close(a, b, 0.011) for a, b in zip(want[2:], g[2:])):
                fail(f"memory {device}: {want} != plugin {g}")

    events = json.load(open(os.path.join(folder, "memory_events.json")))
    for device, rows in events["rows"].items():
        mine = [a for a in allocs if a["device"] == device]
        if len(mine) != len(rows):
            fail(f"memory_events {device}: {len(mine)} allocations, the plugin {len(rows)}")
            continue
        for m, g in zip(mine, rows):
            times = [None if num(m[k]) is None else display_round(num(m[k]) / 1000.0)
                     for k in ("alloc_ts", "free_ts", "duration")]
            if m["operator"] != g[0] or not close(display_round(int(m["bytes"]) / KB), g[1], 0.011) \
                    or not all(close(a, b, 0.011) for a, b in zip(times, g[2:])):
                fail(f"memory_events {device}: {m} != plugin {g}")

    curves = json.load(open(os.path.join(folder, "memory_curve.json")))
    for device, points in curves["rows"].items():
        points = points[::2]  # before patch_curves_for_step_plot
        mine = [c for c in curve if c["device"] == device]
        if len(mine) != len(points):
            fail(f"memory_curve {device}: {len(mine)} points, the plugin {len(points)}")
            continue
        for m, g in zip(mine, points):
            # The CSV prints 6 significant digits.
            if not (close(float(m["ts"]) / 1000.0, g[0], 1e-4 + 1e-5 * abs(g[0])) and
                    close(float(m["allocated"]) / MB, g[1], 1e-5 * abs(g[1])) and
                    close(float(m["reserved"]) / MB, g[2], 1e-5 * abs(g[2]))):
                fail(f"memory_curve {device}: {m} != plugin {g}")
                break
        peak = next((d for d in devices if d["device"] == device), None)
        want = f"Peak Memory Usage: {float(peak['peak_allocated']) / MB:.1f}MB" if peak else None
        if want != curves["metadata"]["peaks"].get(device):
            fail(f"memory_curve {device}: {want} != plugin {curves['metadata']['peaks'].get(device)}")


def main():
    profsh, golden, runs_dir = sys.argv[1:4]
    try:
        samples = tb_harness.sample_runs_dir()
    except Exception:  # no kineto clone: only the committed runs
        samples = None
    failures, checked = [], 0
    folders = {os.path.dirname(p) for name in ("memory.json", "module.json")
               for p in glob.glob(os.path.join(golden, "*", "*", name))}
    for folder in sorted(folders):
        run = os.path.basename(os.path.dirname(folder))
        trace = trace_of(run, os.path.basename(folder), runs_dir, samples)
        if trace is None:
            continue
        check_worker(profsh, folder, trace, failures)
        checked += 1
        print(f"checked {run}/{os.path.basename(folder)}")
    for f in failures:
        print("FAIL", f)
    if checked == 0:
        print("no golden run with a trace found")
        return 77
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
