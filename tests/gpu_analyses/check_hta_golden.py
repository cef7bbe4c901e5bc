#!/usr/bin/env python3
"""profsh's device-time analyses against HTA's outputs recorded on the shared traces.

usage: check_hta_golden.py PROFSH GOLDEN_DIR TRACES_DIR

For each trace folder in GOLDEN_DIR (recorded by record_hta_golden.py), runs dump_analyses.lua
and compares every CSV HTA wrote, row by row on the analysis' key columns: percentages to 0.1
percentage point, ratios to 0.01, times to 0.5 % (at least 1 µs, HTA's rounding unit). Where HTA
failed (`*.error`), profsh must give empty rows and a note instead. Where profsh deliberately
differs, DELIBERATE says why and what is compared instead.
"""
import csv
import math
import os
import subprocess
import sys
import tempfile

profsh, golden_dir, traces_dir = sys.argv[1:4]
if not os.path.isdir(traces_dir):
    print(f"skipped: no traces at {traces_dir}")
    sys.exit(77)
here = os.path.dirname(os.path.abspath(__file__))

RENAME = {
    "idle_time(us)": "idle_time", "compute_time(us)": "compute_time",
    "non_compute_time(us)": "non_compute_time", "kernel_time(us)": "kernel_time",
    "sum (us)": "sum", "max (us)": "max", "min (us)": "min", "mean (us)": "mean",
}
KEYS = {
    "temporal_breakdown.csv": ["rank"],
    "temporal_breakdown_last_step.csv": ["rank"],
    "kernel_type_breakdown.csv": ["kernel_type"],
    "kernel_breakdown.csv": ["kernel_type", "name", "rank"],
    "idle_time_breakdown.csv": ["rank", "stream", "idle_category"],
    "idle_interval_stats.csv": ["rank", "stream", "idle_category"],
    "comm_comp_overlap.csv": ["rank"],
    "kernel_launch_stats.csv": ["correlation", "#"],
    "annotation_breakdown.csv": ["rank", "name"],
    "annotation_breakdown_cpu.csv": ["rank", "name"],
    "annotation_breakdown_allowlist.csv": ["rank", "name"],
    "annotation_breakdown_cpu_allowlist.csv": ["rank", "name"],
    "queue_length_summary.csv": ["rank", "stream"],
    "aten_op_delays.csv": ["aten_op_name", "kernel_sequence"],
}
# (trace folder prefix, file) -> why profsh differs. These files are not compared.
DELIBERATE = {
    ("amd_trace", "kernel_launch_stats.csv"):
        "HTA takes ROCm's runtime calls, which carry a stream argument, for device work and "
        "finds no launches; profsh links hipLaunchKernel/hipMemcpyAsync to their kernels",
}
TRITON_CPU_OP = ("HTA counts the CPU op that launches the Triton kernel (a cpu_op with a 'stream' "
                 "argument) as device work: 94 µs of CPU time as kernel time; profsh counts only "
                 "device categories (1 µs kernel)")
for f in ("temporal_breakdown.csv", "temporal_breakdown_last_step.csv", "kernel_breakdown.csv",
          "kernel_type_breakdown.csv"):
    DELIBERATE[("triton_example", f)] = TRITON_CPU_OP
failures = []


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    out = []
    for row in rows:
        out.append({RENAME.get(k, k): v for k, v in row.items() if k is not None})
    return out


def number(text):
    if text is None or text == "" or text.lower() == "nan":
        return None
    return float(text)


def tolerance(column, expected):
    if column.endswith("pctg") or column == "percentage":
        return 0.1 + 1e-9
    if column.endswith("ratio"):
        return 0.01 + 1e-9
    if column == "count":
        return 0
    return max(0.005 * abs(expected), 1.0)


def keyed(rows, keys):
    seen = {}
    out = {}
    for row in rows:
        base = tuple(row.get(k, "") for k in keys if k != "#")
        if "#" in keys:
            n = seen.get(base, 0)
            seen[base] = n + 1
            base = base + (n,)
        out[base] = row
    return out


def normalize_key(value):
    try:
        f = float(value)
        return str(int(f)) if f == int(f) else value
    except ValueError:
        return value


def compare(trace, name, hta_rows, profsh_rows):
    keys = KEYS[name]
    for rows in (hta_rows, profsh_rows):
        for row in rows:
            for k in keys:
                if k in row:
                    row[k] = normalize_key(row[k])
    expected = keyed(hta_rows, keys)
    actual = keyed(profsh_rows, keys)
    aggregated_types = {r.get("kernel_type") for r in hta_rows if r.get("name") == "others"}
    for key, row in expected.items():
        got = actual.get(key)
        if got is None:
# A combination HTA lists with zero time (a tie at one instant) may be absent.
            if name == "kernel_type_breakdown.csv" and number(row["sum"]) == 0:
                continue
            failures.append(f"{trace}/{name}: HTA's row {key} missing in profsh")
            continue
        columns = [c for c in row if c not in keys]
        if name == "kernel_breakdown.csv" and row["kernel_type"] in aggregated_types:
# HTA re-aggregates the per-kernel sums once "others" appears, so its max/min/mean
# of every row of the type become figures of sums; profsh keeps per-kernel figures
# (docs/ANALYSIS.md). The sums agree.
            columns = ["sum"]
        if name.startswith("annotation_breakdown") and any(r.get("name") == "others"
                                                           for r in hta_rows):
            columns = ["sum"]  # the same re-aggregation, over all annotation names
        for c in columns:
            e, a = number(row[c]), number(got.get(c))
            if e is None or a is None:
                if e is None and a is None:
                    continue
# pandas' std of one value is NaN where profsh writes nothing; the rest must match.
                if c == "std" and e is None:
                    continue
                failures.append(f"{trace}/{name} {key} {c}: HTA {row[c]!r}, profsh {got.get(c)!r}")
                continue
            # Queue lengths: HTA orders a launch and a start at the same microsecond as pandas'
            # unstable quicksort leaves them, profsh puts the launch first (docs/ANALYSIS.md), so
            # statistics over the sequence of values may differ by a little, never more than 2 %.
            tol = max(0.02 * abs(e), 0.01) if name == "queue_length_summary.csv" else tolerance(c, e)
            if abs(e - a) > tol:
                failures.append(f"{trace}/{name} {key} {c}: HTA {e}, profsh {a}")
    for key in actual:
        if key not in expected:
            if name == "kernel_type_breakdown.csv" and number(actual[key]["sum"]) == 0:
                continue
            failures.append(f"{trace}/{name}: profsh has a row HTA lacks: {key}")


def trace_file(folder):
    for f in os.listdir(traces_dir):
        if f.startswith(folder + ".json"):
            return os.path.join(traces_dir, f)
    raise SystemExit(f"no trace for golden folder {folder} in {traces_dir}")


compared = 0
for folder in sorted(os.listdir(golden_dir)):
    golden = os.path.join(golden_dir, folder)
    if not os.path.isdir(golden):
        continue
    with tempfile.TemporaryDirectory() as out:
        r = subprocess.run([profsh, os.path.join(here, "dump_analyses.lua"), trace_file(folder), out],
                           capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(f"{folder}: profsh failed: {r.stderr.strip()}")
            continue
        for name in sorted(os.listdir(golden)):
            if name.endswith(".error"):
# HTA failed on this analysis (no kernels, no annotations); profsh must answer
# with empty rows (and a note), never an error.
                analysis = name[:-len(".error")]
                outputs = {"kernel_breakdown": ["kernel_breakdown.csv", "kernel_type_breakdown.csv"],
                           "idle_time_breakdown": ["idle_time_breakdown.csv"]}.get(analysis, [analysis + ".csv"])
                for output in outputs:
                    path = os.path.join(out, output)
                    if not os.path.exists(path):
                        failures.append(f"{folder}: profsh wrote no {output} (HTA failed)")
                    elif read_csv(path):
                        failures.append(f"{folder}: HTA fails on {analysis} but profsh has rows")
                continue
            if any(folder.startswith(p) and name == f for (p, f) in DELIBERATE):
                continue
            compare(folder, name, read_csv(os.path.join(golden, name)),
                    read_csv(os.path.join(out, name)))
            compared += 1

for f in failures:
    print("FAIL", f)
print(f"{compared} golden files compared, {len(failures)} differences")
sys.exit(1 if failures or compared == 0 else 0)
