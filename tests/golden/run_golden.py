#!/usr/bin/env python3
"""Golden tests: PyTorch's own table() output and key_averages() rows against profsh.

For every case folder (recorded by record_torch.py) and every table variant in its cases.json,
profsh loads the trace, computes key_averages with the same options and prints the table; the
text must equal torch's byte for byte. Every row's count, times, memory and flops must equal
torch's. Cases with a legacy.json (torch's own export_chrome_trace output) are checked on that
file as well.

Usage: run_golden.py PROFSH CASES_DIR
Exit status 0 when everything matches; prints a diff of the first mismatches otherwise.
"""
import difflib
import json
import os
import subprocess
import sys
import tempfile

LUA = r'''
local trace_path, out_dir, spec_path = ...
local t = profsh.load(trace_path)
local function q(v) return v end
local variants = dofile(spec_path)
for _, v in ipairs(variants) do
  local avgs = t:key_averages(v.key_averages)
  local f = assert(io.open(out_dir .. "/" .. v.name .. ".txt", "wb"))
  f:write(avgs:table(v.table))
  f:close()
end
for _, g in ipairs(variants.groupings) do
  local avgs = t:key_averages(g.options)
  local f = assert(io.open(out_dir .. "/rows_" .. g.name .. ".tsv", "wb"))
  for _, a in ipairs(avgs) do
    f:write(table.concat({a.key, a.count, string.format("%.3f", a.cpu_time_total),
      string.format("%.3f", a.self_cpu_time_total), string.format("%.3f", a.cuda_time_total),
      string.format("%.3f", a.self_cuda_time_total), a.cpu_memory_usage, a.self_cpu_memory_usage,
      a.flops}, "\t"), "\n")
  end
  f:close()
end
'''


def lua_literal(value):
    if value is None:
        return "false"  # profsh's table() takes false where torch takes None (no limit)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string literal is a valid Lua string literal here
    if isinstance(value, dict):
        return "{" + ", ".join("[%s] = %s" % (lua_literal(k), lua_literal(v)) for k, v in value.items()) + "}"
    raise TypeError(value)


def grouping_name(g):
    if g.get("group_by_input_shape"):
        return "shape"
    if g.get("group_by_stack_n"):
        return "stack%d" % g["group_by_stack_n"]
    return "name"


def check_case(profsh, case_dir, trace_file, label):
    with open(os.path.join(case_dir, "cases.json")) as f:
        spec = json.load(f)
    # Cases whose trace is not one torch 2.x wrote but whose tables torch 2.x printed
    # (record_torch26_events.py) tell profsh which torch to follow.
    if spec.get("torch_format"):
        for variant in spec["variants"]:
            variant["key_averages"] = dict(variant["key_averages"], torch_format=spec["torch_format"])
            variant["table"] = dict(variant["table"], torch_format=spec["torch_format"])
        spec["groupings"] = [dict(g, torch_format=spec["torch_format"]) for g in spec["groupings"]]
    failures = []
    with tempfile.TemporaryDirectory() as out:
        spec_lua = os.path.join(out, "spec.lua")
        with open(spec_lua, "w") as f:
            f.write("local v = {\n")
            for variant in spec["variants"]:
                f.write("  {name=%s, key_averages=%s, table=%s},\n" % (
                    lua_literal(variant["name"]), lua_literal(variant["key_averages"]),
                    lua_literal(variant["table"])))
            f.write("}\nv.groupings = {\n")
            for g in spec["groupings"]:
                f.write("  {name=%s, options=%s},\n" % (lua_literal(grouping_name(g)), lua_literal(g)))
            f.write("}\nreturn v\n")
        script = os.path.join(out, "golden.lua")
        with open(script, "w") as f:
            f.write(LUA)
        proc = subprocess.run([profsh, script, os.path.join(case_dir, trace_file), out, spec_lua],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            return ["%s: profsh failed:\n%s%s" % (label, proc.stdout, proc.stderr)]
        for variant in spec["variants"]:
            name = variant["name"]
            with open(os.path.join(case_dir, "tables", name + ".txt"), encoding="utf-8") as f:
                expected = f.read()
            with open(os.path.join(out, name + ".txt"), encoding="utf-8") as f:
                actual = f.read()
            if expected != actual:
                diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                                    "torch", "profsh", n=1))
                failures.append("%s: table %s differs:\n%s" % (label, name, diff[:4000]))
        for g in spec["groupings"]:
            gname = grouping_name(g)
            rows_file = os.path.join(case_dir, "rows", gname + ".json")
            if not os.path.exists(rows_file):
                continue
            with open(rows_file, encoding="utf-8") as f:
                torch_rows = json.load(f)
            with open(os.path.join(out, "rows_" + gname + ".tsv"), encoding="utf-8") as f:
                ours = [line.rstrip("\n").split("\t") for line in f]
            if len(ours) != len(torch_rows):
                failures.append("%s: %s: %d rows, torch has %d" % (label, gname, len(ours), len(torch_rows)))
                continue
            for i, (mine, theirs) in enumerate(zip(ours, torch_rows)):
                want = [theirs["key"], str(theirs["count"]), "%.3f" % theirs["cpu_time_total"],
                        "%.3f" % theirs["self_cpu_time_total"], "%.3f" % theirs["cuda_time_total"],
                        "%.3f" % theirs["self_cuda_time_total"], str(theirs["cpu_memory_usage"]),
                        str(theirs["self_cpu_memory_usage"]), str(theirs["flops"])]
                if mine != want:
                    failures.append("%s: %s row %d: profsh %s, torch %s" % (label, gname, i, mine, want))
                    break
    return failures


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    profsh, cases_dir = sys.argv[1], sys.argv[2]
    failures = []
    checked = 0
    for case in sorted(os.listdir(cases_dir)):
        case_dir = os.path.join(cases_dir, case)
        if not os.path.isdir(case_dir):
            continue
        failures += check_case(profsh, case_dir, "trace.json.gz", case)
        checked += 1
        if os.path.exists(os.path.join(case_dir, "legacy.json")):
            failures += check_case(profsh, case_dir, "legacy.json", case + " (legacy export)")
            checked += 1
    for f in failures:
        print(f)
    print("golden: %d traces checked, %d mismatches" % (checked, len(failures)))
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
