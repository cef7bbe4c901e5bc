#!/usr/bin/env python3
"""Checks profsh's device-side numbers on the real Kineto GPU traces in ../shared/traces.

Kernel counts, total kernel time and per-operator CUDA totals are computed here from the raw
JSON with Python's json module, independently of profsh's C++ code, following the semantics
documented in docs/ANALYSIS.md:
  - device work: categories kernel, gpu_memcpy, gpu_memset
  - a kernel belongs to the CPU op named by its "External id" when that differs from its
    "correlation" (newer Kineto); otherwise to the innermost CPU range on the launching thread
    that contains the runtime call with the same "correlation" (older Kineto)
  - self CUDA of an op = its own kernels; CUDA total = own + children's, after torch's merge of
    lone same-name children.
  - a gpu_user_annotation span counts as a kernel of the CPU range its "External id" names, as
    torch's _parse_kineto_results (1.13's and 2.x's) attaches every linked CUDA event.
Then profsh loads the same file and its key_averages() rows must agree, and so must what Lua
sees: each row's and event's kind (kernel, copy, set; gpu_user_annotation spans are
annotations, not device work), and trace:launcher(kernel), the op found above, on every
trace and on the bundled alexnet_a100 sample (older Kineto, where a join on External id
finds nothing). scripts/gpu_kernels.lua must report the device time computed here.

Usage: check_gpu_traces.py PROFSH TRACES_DIR [SCRIPTS_DIR]
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile

DEVICE = {"kernel", "gpu_memcpy", "gpu_memset"}
ANNOTATION = {"gpu_user_annotation"}
RUNTIME = {"cuda_runtime", "cuda_driver"}
SKIP = {"trace", "ac2g", "fwdbwd", "async_cpu_to_gpu", "cpu_to_cuda", "cuda_sync", "cuda_event",
        "overhead", "python_function", "external_correlation", "cuda_profiler_range", "gpu_memory",
        "cpu_instant_event"}
FILTERED = {"[memory]", "[OutOfMemory]", "profiler::_record_function_enter",
            "profiler::_record_function_enter_new", "profiler::_record_function_exit",
            "aten::is_leaf", "aten::output_nr", "aten::_version"}


def ns(value):
    # Microseconds to integer nanoseconds, from the number's text: a double cannot hold
    # 1712195495520023.272 exactly, so floats are kept as strings when the JSON is read.
    text = str(value)
    if "e" in text or "E" in text:
        return round(float(value) * 1000)
    whole, _, frac = text.partition(".")
    neg = whole.startswith("-")
    whole = whole.lstrip("-")
    frac = (frac + "000")[:3]
    v = int(whole) * 1000 + int(frac)
    return -v if neg else v


KIND = {"kernel": "kernel", "gpu_memcpy": "copy", "gpu_memset": "set"}


def expected(trace_path):
    with gzip.open(trace_path, "rt") as f:
        doc = json.load(f, parse_float=str)
    cpu, kernels, spans = [], [], []
    for e in doc["traceEvents"]:
        if e.get("ph") != "X":
            continue
        cat = str(e.get("cat", "")).lower()
        if cat in SKIP or e.get("name") in FILTERED:
            continue
        item = {"name": e["name"], "start": ns(e["ts"]), "end": ns(e["ts"]) + ns(e["dur"]),
                "track": (str(e.get("pid")), str(e.get("tid"))), "args": e.get("args", {}),
                "cat": cat, "kernels": 0, "children": [], "parent": None, "index": len(cpu)}
        if cat in DEVICE:
            kernels.append(item)
        elif cat in ANNOTATION:
            spans.append(item)
        else:
            cpu.append(item)
    cpu.sort(key=lambda x: (x["start"], -x["end"]))
    by_track = {}
    for e in cpu:
        by_track.setdefault(e["track"], []).append(e)
    for events in by_track.values():
        stack = []
        for e in events:
            while stack:
                p = stack[-1]
                if e["start"] >= p["end"] or e["end"] > p["end"]:
                    stack.pop()
                else:
                    e["parent"] = p
                    p["children"].append(e)
                    break
            stack.append(e)
    ops_by_ext = {}
    runtime_by_corr = {}
    for e in cpu:
        a = e["args"]
        if e["cat"] in RUNTIME:
            if "correlation" in a:
                runtime_by_corr.setdefault(a["correlation"], e)
        elif "External id" in a:
            ops_by_ext.setdefault(a["External id"], e)
    total_kernel_ns = 0
    for k in kernels:
        dur = k["end"] - k["start"]
        total_kernel_ns += dur
        a = k["args"]
        op = None
        if "External id" in a and "correlation" in a and a["External id"] != a["correlation"]:
            op = ops_by_ext.get(a["External id"])
        if op is None and "correlation" in a and a["correlation"] in runtime_by_corr:
            op = runtime_by_corr[a["correlation"]]["parent"]
        k["launcher"] = op["name"] if op is not None else "?"
        if op is not None:
            op["kernels"] += dur
    first_by_ext = {}
    for e in sorted(cpu, key=lambda x: x["index"]):
        if e["cat"] not in RUNTIME and "External id" in e["args"]:
            first_by_ext.setdefault(e["args"]["External id"], e)
    for span in spans:
        op = first_by_ext.get(span["args"].get("External id"))
        if op is not None:
            op["kernels"] += span["end"] - span["start"]
    # torch's merge of a lone child that has its parent's name.
    alive = set(id(e) for e in cpu)
    changed = True
    while changed:
        changed = False
        for e in cpu:
            if id(e) not in alive or e["parent"] is None:
                continue
            p = e["parent"]
            if p["name"] == e["name"] and len(p["children"]) == 1:
                p["children"] = e["children"]
                p["kernels"] = e["kernels"]
                for c in e["children"]:
                    c["parent"] = p
                alive.discard(id(e))
                changed = True
    live = [e for e in cpu if id(e) in alive]

    def cuda_total(e):
        return e["kernels"] + sum(cuda_total(c) for c in e["children"])

    sys.setrecursionlimit(100000)
    per_op = {}
    for e in live:
        name = "ProfilerStep*" if e["name"].startswith("ProfilerStep#") else e["name"]
        row = per_op.setdefault(name, [0, 0])
        row[0] += e["kernels"]
        row[1] += cuda_total(e)
    device_rows = {}
    for k in kernels:
        row = device_rows.setdefault(k["name"], [0, 0, set()])
        row[0] += 1
        row[1] += k["end"] - k["start"]
        row[2].add(KIND[k["cat"]])
    launches = [(KIND[k["cat"]], k["name"], k["launcher"]) for k in kernels]
    return len(kernels), total_kernel_ns, per_op, device_rows, launches


LUA = r'''
local t = profsh.load(...)
for _, a in ipairs(t:key_averages()) do
  io.write(a.device_type, "\t", a.key, "\t", a.count, "\t",
           string.format("%.3f\t%.3f", a.self_cuda_time_total, a.cuda_time_total), "\t", a.kind, "\n")
end
'''

# Device work in trace order, each with its kind and the name of the op that launched it.
LAUNCH_LUA = r'''
local t = profsh.load(...)
for _, e in ipairs(t:events{ph = "X"}) do
  if e.kind == "kernel" or e.kind == "copy" or e.kind == "set" then
    local op = t:launcher(e)
    io.write(e.kind, "\t", e.name, "\t", op and op.name or "?", "\n")
  end
end
'''


def check_lua_view(profsh, path, launches, failures):
    """Kinds and launchers as Lua sees them, against the independent join."""
    name = os.path.basename(path)
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(LAUNCH_LUA)
        script = f.name
    try:
        out = subprocess.run([profsh, script, path], capture_output=True, text=True)
    finally:
        os.unlink(script)
    if out.returncode != 0:
        failures.append("%s: launcher script failed: %s" % (name, out.stderr))
        return
    got = [tuple(l.split("\t")) for l in out.stdout.splitlines()]
    if got != launches:
        wrong = [(g, w) for g, w in zip(got, launches) if g != w][:3]
        failures.append("%s: launchers of %d device events, expected %d; first differences %s" %
                        (name, len(got), len(launches), wrong))
    linked = sum(1 for l in launches if l[2] != "?")
    print("%s: %d of %d device events linked to their op from Lua" % (name, linked, len(launches)))
    if launches and linked == 0:
        failures.append("%s: no device event has a launcher" % name)


def main():
    profsh, traces = sys.argv[1], sys.argv[2]
    names = sorted(f for f in os.listdir(traces) if f.endswith(".json.gz"))
    failures, checked = [], 0
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(LUA)
        script = f.name
    try:
        for name in names:
            path = os.path.join(traces, name)
            n_kernels, kernel_ns, per_op, device_rows, launches = expected(path)
            check_lua_view(profsh, path, launches, failures)
            out = subprocess.run([profsh, script, path], capture_output=True, text=True)
            if out.returncode != 0:
                failures.append("%s: profsh failed: %s" % (name, out.stderr))
                continue
            got_ops, got_dev = {}, {}
            for line in out.stdout.splitlines():
                dev, key, count, self_cuda, cuda_total, kind = line.split("\t")
                if dev == "CPU":
                    got_ops[key] = (float(self_cuda), float(cuda_total))
                else:
                    got_dev[key] = (int(count), float(self_cuda))
                    want_kinds = device_rows[key][2] if key in device_rows else {"annotation"}
                    if kind not in want_kinds:
                        failures.append("%s: row %r has kind %s, expected %s" % (name, key[:60], kind, want_kinds))
            got_kernels = sum(c for k, (c, _) in got_dev.items() if k in device_rows)
            got_kernel_us = sum(t for k, (_, t) in got_dev.items() if k in device_rows)
            if got_kernels != n_kernels:
                failures.append("%s: %d kernels, expected %d" % (name, got_kernels, n_kernels))
            if abs(got_kernel_us - kernel_ns / 1000.0) > 1e-6 * max(1.0, kernel_ns / 1000.0):
                failures.append("%s: kernel time %.3f us, expected %.3f" % (name, got_kernel_us, kernel_ns / 1000.0))
            for op, (self_ns, total_ns) in per_op.items():
                got = got_ops.get(op)
                want = ("%.3f" % (self_ns / 1000.0), "%.3f" % (total_ns / 1000.0))
                if got is None:
                    failures.append("%s: op %r missing" % (name, op))
                elif ("%.3f" % got[0], "%.3f" % got[1]) != want:
                    failures.append("%s: op %r self/total CUDA %s, expected %s" % (name, op, got, want))
            for k, (count, dur_ns, _) in device_rows.items():
                got = got_dev.get(k)
                if got is None or got[0] != count or "%.3f" % got[1] != "%.3f" % (dur_ns / 1000.0):
                    failures.append("%s: kernel %r: %s, expected (%d, %.3f)" % (name, k[:60], got, count, dur_ns / 1000.0))
            checked += 1
            print("%s: %d kernels, %.3f ms of device time, %d ops checked" % (name, n_kernels, kernel_ns / 1e6, len(per_op)))
        if len(sys.argv) > 3:
            scripts = sys.argv[3]
            # The bundled sample: older Kineto (External id == correlation on device work).
            sample = os.path.join(scripts, "samples", "alexnet_a100.pt.trace.json.gz")
            check_lua_view(profsh, sample, expected(sample)[4], failures)
            # gpu_kernels.lua counts kernels, copies and sets, not gpu_user_annotation spans.
            for name in names:
                path = os.path.join(traces, name)
                n_kernels, kernel_ns, _, device_rows, _ = expected(path)
                if n_kernels == 0:
                    continue
                out = subprocess.run([profsh, os.path.join(scripts, "gpu_kernels.lua"), path], capture_output=True, text=True)
                line = [l for l in out.stdout.splitlines() if "ms of device time" in l]
                want = "%d distinct kernels, copies and sets, %.3f ms of device time" % (len(device_rows), kernel_ns / 1e6)
                if out.returncode != 0 or line != [want]:
                    failures.append("%s: gpu_kernels.lua says %s, expected %r (%s)" % (name, line, want, out.stderr.strip()))
    finally:
        os.unlink(script)
    for f in failures[:40]:
        print("FAIL", f)
    print("gpu traces: %d checked, %d mismatches" % (checked, len(failures)))
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
