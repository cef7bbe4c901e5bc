#!/usr/bin/env python3
"""profsh's TensorBoard views against the plugin's answers recorded in golden/.

usage: check_views_golden.py PROFSH GOLDEN_DIR TRACES_DIR

For each run in GOLDEN_DIR: the shared traces (their copies in TRACES_DIR) and, when the kineto
clone is there (tb_harness.plugin_dir()), the plugin's sample runs, span by span. Runs
dump_views.lua and compares: the step breakdown per step and its average within 1 µs (the
plugin's average is rounded to the µs), the average's percentages within 0.01; the GPU summary's
properties exactly and its metrics within 0.01 percentage points (the plugin rounds them to two
decimals); the kernel table row for row (names and tensor-core use exactly, calls exactly,
durations within 1 µs as the plugin rounds them, blocks per SM and occupancy within 0.01); the operator
table's tensor-core columns on key_averages rows (operation_table.json by name,
operation_table_input.json by name and input shapes: each of the plugin's rows has a profsh row,
tc_eligible exactly, tc_self_ratio and tc_total_ratio within 0.01 percentage points as the plugin
rounds them). Where profsh deliberately differs, DELIBERATE says why and what is compared instead.
"""
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

profsh, golden_dir, traces_dir = sys.argv[1:4]
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import tb_harness  # noqa: E402

CATEGORIES = [("Kernel", "kernel"), ("Memcpy", "memcpy"), ("Memset", "memset"),
              ("Communication", "communication"), ("Runtime", "runtime"),
              ("DataLoader", "dataloader"), ("CPU Exec", "cpu_exec"), ("Other", "other")]
# Where profsh deliberately differs (docs/ANALYSIS.md, "TensorBoard views"): run -> the step
# breakdown's tolerance as a fraction of the step's total, and why.
STEP_TOLERANCE = {
    # Its timestamps are µs since the epoch with ns fractions (1712195495505848.512): Python's
    # float holds them to 0.25 µs, so each interval edge the plugin sums is off by up to that;
    # profsh keeps the nanoseconds. Over a step's hundreds of kernels that is a few µs of 100 ms.
    "ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace": 1e-4,
}

failures = []


def fail(where, message):
    failures.append(f"{where}: {message}")


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def number(cell):
    return float(cell) if cell not in ("", None) else None


def close(a, b, tolerance):
    return a is not None and b is not None and abs(a - b) <= tolerance + 1e-9


def check_steps(where, overview, steps, average, relative):
    columns = [c["name"] for c in overview["steps"]["columns"] if "name" in c][1:]
    rows = [[v for v in r if not (isinstance(v, str) and v.startswith("<"))]
            for r in overview["steps"]["rows"]]
    if [r[0] for r in rows] != [s["step"] for s in steps]:
        fail(where, f"steps {[r[0] for r in rows]}, profsh {[s['step'] for s in steps]}")
        return
    for golden, mine in zip(rows, steps):
        values = dict(zip(columns, golden[1:]))
        tolerance = max(1.0, relative * sum(golden[1:]))
        for name, column in CATEGORIES:
            want = values.get(name, 0)  # a column the plugin leaves out is a category never busy
            if not close(number(mine[column]), want, tolerance):
                fail(where, f"step {golden[0]} {column}: plugin {want}, profsh {mine[column]}")
        if not close(number(mine["total"]), sum(golden[1:]), 1.0):
            fail(where, f"step {golden[0]} total: plugin {sum(golden[1:])}, profsh {mine['total']}")
    perf = overview["performance"][0]
    mine = average[0]
    tolerance = max(1.0, relative * perf["value"])
    if not close(number(mine["total"]), perf["value"], 1.0):
        fail(where, f"average total: plugin {perf['value']}, profsh {mine['total']}")
    children = {c["name"]: c for c in perf["children"]}
    for name, column in CATEGORIES:
        child = children.get(name, {"value": 0, "extra": 0.0})
        if not close(number(mine[column]), child["value"], tolerance):
            fail(where, f"average {column}: plugin {child['value']}, profsh {mine[column]}")
        if not close(number(mine[column + "_pct"]), child["extra"], max(0.01, 100 * relative)):
            fail(where, f"average {column}_pct: plugin {child['extra']}, profsh {mine[column + '_pct']}")


GPU_FIELDS = {"GPU Utilization": "utilization_pct", "Est. SM Efficiency": "sm_efficiency_pct",
              "Est. Achieved Occupancy": "achieved_occupancy_pct",
              "Kernel Time using Tensor Cores": "tensor_core_pct"}


def check_gpus(where, overview, gpus):
    devices = []
    for entry in overview.get("gpu_metrics", {}).get("data", []):
        m = re.match(r"GPU (\d+):", entry["title"])
        if m:
            devices.append({"device": int(m.group(1))})
        elif entry["title"] != "<hr/>":
            devices[-1][entry["title"]] = entry["value"]
    if [d["device"] for d in devices] != [int(g["device"]) for g in gpus]:
        fail(where, f"GPUs {[d['device'] for d in devices]}, profsh {[g['device'] for g in gpus]}")
        return
    for golden, mine in zip(devices, gpus):
        at = f"{where} GPU {golden['device']}"
        if golden.get("Name", "") != mine["name"]:
            fail(at, f"name: plugin {golden.get('Name')!r}, profsh {mine['name']!r}")
        memory = f"{round(float(mine['memory_bytes']) / 1024 ** 3, 2)} GB" if mine["memory_bytes"] else ""
        if golden.get("Memory", "") != memory:
            fail(at, f"memory: plugin {golden.get('Memory')!r}, profsh {mine['memory_bytes']}")
        if golden.get("Compute Capability", "") != mine["compute_capability"]:
            fail(at, f"compute capability: plugin {golden.get('Compute Capability')!r}, "
                     f"profsh {mine['compute_capability']!r}")
        for title, column in GPU_FIELDS.items():
            want = number(golden[title].rstrip(" %")) if title in golden else None
            got = number(mine[column])
            if (want is None) != (got is None) or (want is not None and not close(got, want, 0.01)):
                fail(at, f"{column}: plugin {golden.get(title)}, profsh {mine[column]}")


def check_kernels(where, table, kernels):
    columns = [c["name"] for c in table["data"]["columns"]]
    rows = [dict(zip(columns, r)) for r in table["data"]["rows"]]
    if sorted(r["Name"] for r in rows) != sorted(k["name"] for k in kernels):
        fail(where, f"kernel names differ: {len(rows)} in the plugin, {len(kernels)} in profsh")
        return
    totals = [r["Total Duration (us)"] for r in rows]
    by_name = {k["name"]: (i, k) for i, k in enumerate(kernels)}
    for i, golden in enumerate(rows):
        position, mine = by_name[golden["Name"]]
        at = f"{where} kernel {golden['Name'][:60]}"
        # Rows of equal total may come in either order (pandas' sort is not stable).
        if position != i and totals.count(golden["Total Duration (us)"]) == 1:
            fail(at, f"row {position + 1} in profsh, {i + 1} in the plugin")
        if golden["Tensor Cores Used"] != mine["tensor_cores"]:
            fail(at, f"tensor cores: plugin {golden['Tensor Cores Used']}, profsh {mine['tensor_cores']}")
        if golden["Calls"] != int(mine["calls"]):
            fail(at, f"calls: plugin {golden['Calls']}, profsh {mine['calls']}")
        for title, column in [("Total Duration (us)", "total"), ("Mean Duration (us)", "mean"),
                              ("Max Duration (us)", "max"), ("Min Duration (us)", "min")]:
            if not close(number(mine[column]), golden[title], 1.0):
                fail(at, f"{column}: plugin {golden[title]}, profsh {mine[column]}")
        for title, column in [("Mean Blocks Per SM", "blocks_per_sm"),
                              ("Mean Est. Achieved Occupancy (%)", "achieved_occupancy_pct")]:
            want, got = golden.get(title), number(mine[column])
            if (want is None) != (got is None) or (want is not None and not close(got, want, 0.01)):
                fail(at, f"{column}: plugin {want}, profsh {mine[column]}")


def pick_operator_rows(rows, by_shape):
    """profsh's key_averages rows by the plugin's key: the CPU row of the name (and shapes); an
    operator's row before a user range's of the same name (torch 2.x keeps them apart)."""
    picked = {}
    for row in rows:
        if row["device_type"] != "CPU" or row["kind"] not in ("cpu_op", "annotation"):
            continue
        key = (row["name"], row["input_shapes"] if by_shape else "")
        if key not in picked or (picked[key]["kind"] != "cpu_op" and row["kind"] == "cpu_op"):
            picked[key] = row
    return picked


def check_operators(where, table, rows, by_shape):
    mine = pick_operator_rows(rows, by_shape)
    for golden in table["data"]:
        # The plugin's input_shape is str() of the "Input Dims" list, "None" without one;
        # profsh's first event then has the empty list.
        shapes = golden.get("input_shape", "") if by_shape else ""
        key = (golden["name"], "[]" if shapes == "None" else shapes)
        at = f"{where} operator {golden['name'][:60]}" + (f" {shapes[:40]}" if by_shape else "")
        row = mine.get(key)
        if row is None:
            fail(at, "no key_averages row")
            continue
        eligible = "Yes" if row["tc_eligible"] == "true" else "No"
        if golden["tc_eligible"] != eligible:
            fail(at, f"tc_eligible: plugin {golden['tc_eligible']}, profsh {eligible}")
        for column in ("tc_self_ratio", "tc_total_ratio"):
            if not close(number(row[column]), golden[column], 0.01):
                fail(at, f"{column}: plugin {golden[column]}, profsh {row[column]}")


def check_run(where, trace_path, folder, run):
    with tempfile.TemporaryDirectory() as out:
        r = subprocess.run([profsh, os.path.join(here, "dump_views.lua"), trace_path, out],
                           capture_output=True, text=True)
        if r.returncode != 0:
            fail(where, f"profsh failed: {r.stderr.strip()}")
            return
        mine = {name: read_csv(os.path.join(out, name + ".csv"))
                for name in ("step_breakdown", "step_average", "gpu_summary", "kernel_summary",
                             "key_averages", "key_averages_input")}
    with open(os.path.join(folder, "overview.json")) as f:
        overview = json.load(f)
    check_steps(where, overview, mine["step_breakdown"], mine["step_average"],
                STEP_TOLERANCE.get(run, 0.0))
    check_gpus(where, overview, mine["gpu_summary"])
    table = None
    if os.path.exists(os.path.join(folder, "kernel_table.json")):
        with open(os.path.join(folder, "kernel_table.json")) as f:
            table = json.load(f)  # null without kernels
    if table is not None:
        check_kernels(where, table, mine["kernel_summary"])
    elif mine["kernel_summary"]:
        fail(where, f"the plugin has no kernel view, profsh {len(mine['kernel_summary'])} kernels")
    for name, by_shape in (("operation_table", False), ("operation_table_input", True)):
        path = os.path.join(folder, name + ".json")
        if not os.path.exists(path):
            fail(where, f"no {name}.json in the goldens")
            continue
        with open(path) as f:
            table = json.load(f)
        if table is not None:  # null without operators
            check_operators(where, table, mine["key_averages_input" if by_shape else "key_averages"],
                            by_shape)


def main():
    if not os.path.isdir(traces_dir):
        print(f"skipped: no traces at {traces_dir}")
        return 77
    try:
        samples = tb_harness.sample_runs_dir()
    except tb_harness.PluginUnavailable as e:
        print(f"the plugin's sample runs are left out: {e}")
        samples = None
    checked = 0
    for run in sorted(os.listdir(golden_dir)):
        run_dir = os.path.join(golden_dir, run)
        if not os.path.isdir(run_dir):
            continue
        workers = sorted(w for w in os.listdir(run_dir) if w.startswith("worker0."))
        if samples and os.path.isdir(os.path.join(samples, run)):
            # Span N is the N-th trace file by the timestamp in its name (RunLoader's spans).
            files = sorted(os.listdir(os.path.join(samples, run)))
            for w in workers:
                span = int(w.split(".")[1])
                check_run(f"{run}/{w}", os.path.join(samples, run, files[span - 1]),
                          os.path.join(run_dir, w), run)
                checked += 1
        elif not run.startswith("resnet50_") and not os.path.isdir(
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "runs", run)):
            # (tests/tensorboard/runs: whole runs, checked by check_views_more.py)
            trace = next((n for n in os.listdir(traces_dir) if n.split(".json")[0] == run), None)
            if trace is None:
                fail(run, f"no trace {run}.json* in {traces_dir}")
                continue
            check_run(run, os.path.join(traces_dir, trace), os.path.join(run_dir, workers[0]), run)
            checked += 1
    for f in failures:
        print(f)
    print(f"{checked} runs checked, {len(failures)} differences")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
