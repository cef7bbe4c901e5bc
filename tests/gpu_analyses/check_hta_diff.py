#!/usr/bin/env python3
"""`profsh diff` against HTA's TraceDiff outputs recorded on pairs of the shared traces.

usage: check_hta_diff.py PROFSH GOLDEN_DIR TRACES_DIR

For each case in GOLDEN_DIR/cases.json (recorded by record_hta_diff.py) runs `profsh diff
--format csv` with the case's options and compares with HTA's compare_traces: the same names,
and every count and duration equal (HTA's unit is the whole microsecond it rounds to); the
`change` column must put each name in the group HTA's ops_diff does. Where HTA raised, DELIBERATE
says what profsh does instead and the check asserts that. Then the command line's usage errors
(exit 2) and the Lua function's views and option errors.
"""
import csv
import io
import json
import os
import subprocess
import sys

profsh, golden_dir, traces_dir = sys.argv[1:4]
if not os.path.isdir(traces_dir):
    print(f"skipped: no traces at {traces_dir}")
    sys.exit(77)
failures = []
NUMBERS = ["control_counts", "control_total_duration", "test_counts", "test_total_duration",
           "diff_counts", "diff_duration"]
# case -> the note profsh gives where HTA raises (ValueError: a trace without ProfilerStep).
DELIBERATE = {
    "sync_vs_multi_all": "test trace {test} has no ProfilerStep: its whole trace is compared",
}


def step_args(role, step):
    return [] if step is None else [f"--{role}-step", str(step)]


def run_diff(case):
    c = CASES[case]
    cmd = [profsh, "diff", os.path.join(traces_dir, c["control"]),
           os.path.join(traces_dir, c["test"]), "--device", c["device"], "--by", c["by"],
           "--format", "csv"] + step_args("control", c["control_step"]) + \
        step_args("test", c["test_step"])
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


with open(os.path.join(golden_dir, "cases.json")) as f:
    CASES = json.load(f)
for case in CASES:
    out = run_diff(case)
    error_path = os.path.join(golden_dir, case + ".error")
    if os.path.exists(error_path):
        expected_note = DELIBERATE[case].format(test=os.path.join(traces_dir, CASES[case]["test"]))
        if out.returncode != 0 or expected_note not in out.stderr:
            failures.append(f"{case}: HTA raised; profsh should compare with the note "
                            f"'{expected_note}', got rc {out.returncode}: {out.stderr.strip()}")
        continue
    if out.returncode != 0:
        failures.append(f"{case}: profsh diff failed: {out.stderr.strip()}")
        continue
    key = CASES[case]["by"]
    mine = {row[key]: row for row in csv.DictReader(io.StringIO(out.stdout))}
    with open(os.path.join(golden_dir, case + ".csv"), newline="") as f:
        hta = {row[key]: row for row in csv.DictReader(f)}
    if set(mine) != set(hta):
        failures.append(f"{case}: names differ: only profsh {sorted(set(mine) - set(hta))[:5]}, "
                        f"only HTA {sorted(set(hta) - set(mine))[:5]}")
    for name in sorted(set(mine) & set(hta)):
        for column in NUMBERS:
            if float(mine[name][column]) != float(hta[name][column]):
                failures.append(f"{case}: {name!r} {column}: profsh {mine[name][column]}, "
                                f"HTA {hta[name][column]}")
        if mine[name]["counts_change_categories"] != hta[name]["counts_change_categories"]:
            failures.append(f"{case}: {name!r} counts_change_categories differs")
    groups_path = os.path.join(golden_dir, case + ".groups.json")
    if os.path.exists(groups_path):
        with open(groups_path) as f:
            groups = json.load(f)
        for group, names in groups.items():
            got = sorted(n for n, row in mine.items() if row["change"] == group)
            if got != sorted(names):
                failures.append(f"{case}: group {group}: profsh {got[:5]}..., HTA {names[:5]}...")

# The command line refuses bad usage with exit status 2.
ns = os.path.join(traces_dir, CASES["ns_self_all"]["control"])
for bad in ([ns], [ns, ns, ns], [ns, ns, "--device", "tpu"], [ns, ns, "--step", "x"],
            [ns, ns, "--format", "xml"], [ns, ns, "--bogus"]):
    rc = subprocess.run([profsh, "diff"] + bad, capture_output=True, text=True).returncode
    if rc != 2:
        failures.append(f"profsh diff {bad[1:]}: exit {rc}, expected 2")
out = subprocess.run([profsh, "diff", ns, ns, "--step", "999"], capture_output=True, text=True)
if out.returncode != 1 or "has no ProfilerStep#999 (its steps: 101, 102, 103, 104, 105)" \
        not in out.stderr:
    failures.append(f"a missing step: rc {out.returncode}, {out.stderr.strip()}")

# The Lua function: paths or Traces, the five groups as views, option errors.
amd = os.path.join(traces_dir, CASES["amd_steps_1_2_all"]["control"])
script = f"""
local t = profsh.load({json.dumps(amd)})
local d = profsh.diff(t, {json.dumps(amd)}, {{control_step=1, test_step=2}})
local n = 0
for _, g in ipairs{{"added", "deleted", "increased", "decreased", "unchanged"}} do n = n + #d[g] end
assert(n == #d, "the groups partition the rows")
assert(#d.added == 1 and d.added[1].name == "ProfilerStep#2", "added: " .. tostring(#d.added))
local ok, err = pcall(profsh.diff, t, t, {{device="tpu"}})
assert(not ok and err:find("bad option 'device'"), err)
ok, err = pcall(profsh.diff, t, 42)
assert(not ok and err:find("Trace or path expected"), err)
ok, err = pcall(profsh.diff, t, t, {{step=7}})
assert(not ok and err:find("has no ProfilerStep#7"), err)
print("lua ok")
"""
out = subprocess.run([profsh, "-e", script], capture_output=True, text=True)
if out.returncode != 0 or "lua ok" not in out.stdout:
    failures.append(f"Lua checks: {out.stdout}{out.stderr}")

for f in failures:
    print("FAIL", f)
print(f"{len(CASES)} cases, {len(failures)} failures")
sys.exit(1 if failures else 0)
