#!/usr/bin/env python3
"""The cuda activity end to end, on the test CUDA driver and CUPTI (tests/cuda_double): a workload
linked against the test driver runs under `profsh run --activities nvtx,cuda` (and
profsh.profile with a schedule); what profsh recorded is compared with what the workload did,
exactly: kernel counts and times per range, the table's CUDA columns, copies of every kind,
calls, syncs, GPU memory, ac2g flows, drops, and the summary lines of what cannot be recorded.

Usage: check_cuda.py PROFSH CUDA_WORKLOAD FAKE_CUPTI [CHECK...]
"""
import collections
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def near(value, want, tolerance=0.002):
    """GPU times pass through the test CUPTI's measured clock rate: within 0.2 %."""
    return abs(value - want) <= tolerance * want + 1e-9


def run(profsh, workload, cupti, out, *args, env=None, table=False, extra=()):
    cmd = [profsh, "run", "--activities", "nvtx,cuda", "--cupti", cupti, "-o", out, *extra]
    cmd += ([] if table else ["--no-table"]) + ["--sort-by", "cuda_time_total", "--row-limit", "60"]
    cmd += ["--", workload, *args]
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=e)


def events(path):
    with open(path) as f:
        return json.load(f)


# The workload (cuda_workload.cpp) in its plain mode, 3 steps, 2 threads (one per device).
KERNELS = {"gemm_kernel": (24, 3000), "relu_kernel": (12, 2000), "graph_node": (3, 2000)}
COPY_KINDS = ["HtoD", "DtoH", "DtoD", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "HtoH", "PtoP"]


def check_basic(profsh, workload, cupti, tmp, scenario=""):
    out = os.path.join(tmp, "basic.json")
    r = run(profsh, workload, cupti, out, table=True, env={"FAKE_CUPTI_SCENARIO": scenario})
    check(r.returncode == 0, "the workload runs under profsh with the cuda activity (%s)" % r.stderr[-400:])
    check("called after its destructor" not in r.stderr,
          "CUPTI's last records are taken at exit(), before libcupti's destructors")
    summary = [l for l in r.stderr.splitlines() if "GPU:" in l]
    check(summary and "39 kernels, 10 copies, 1 set, 67 CUDA calls" in summary[0],
          "the summary counts the GPU work: %s" % summary)
    d = events(out)
    ev = d["traceEvents"]
    by_cat = collections.defaultdict(list)
    for e in ev:
        if e.get("ph") == "X":
            by_cat[e.get("cat")].append(e)
    kernels = collections.defaultdict(list)
    for e in by_cat["kernel"]:
        kernels[e["name"]].append(e)
    for name, (count, dur_ns) in KERNELS.items():
        got = kernels.get(name, [])
        check(len(got) == count, "%d %s kernels (%d)" % (count, name, len(got)))
        check(all(near(e["dur"] * 1000, dur_ns) for e in got),
              "every %s lasts %d ns (%s)" % (name, dur_ns, sorted({e["dur"] for e in got})[:4]))
    tracks = {(e["pid"], e["tid"]) for e in by_cat["kernel"] if e["name"] != "graph_node"}
    check(len(tracks) == 4 and {p for p, _ in tracks} == {0, 1},
          "kernels on two streams of each of two devices: %s" % sorted(tracks))
    k = kernels["gemm_kernel"][0]["args"]
    check(k.get("grid") == [3, 1, 1] and k.get("block") == [256, 1, 1] and k.get("registers per thread") == 32
          and k.get("shared memory") == 1024 and k.get("device") == kernels["gemm_kernel"][0]["pid"]
          and k.get("stream") == kernels["gemm_kernel"][0]["tid"] and k.get("context") == k.get("device") + 1
          and abs(k.get("blocks per SM", -1) - 3 / 132) < 1e-9 and abs(k.get("warps per SM", -1) - 24 / 132) < 1e-9
          and k.get("est. achieved occupancy %") == 0 and k.get("correlation") == k.get("External id"),
          "a kernel has Kineto's arguments: %s" % k)
    graph = kernels["graph_node"]
    check(sorted(e["args"].get("graph node id") for e in graph) == [1, 2, 3]
          and {e["args"].get("graph id") for e in graph} == {1}
          and len({e["args"]["correlation"] for e in graph}) == 1,
          "a graph launch's 3 kernel nodes share its correlation, with their node ids")
    copies = {re.match(r"Memcpy (\w+) ", e["name"]).group(1): e for e in by_cat["gpu_memcpy"]}
    check(sorted(copies) == sorted(COPY_KINDS), "one copy of every kind: %s" % sorted(copies))
    check(copies.get("HtoD", {}).get("name") == "Memcpy HtoD (Pageable -> Device)"
          and copies["HtoD"]["args"].get("bytes") == 4096 and copies["HtoD"]["args"].get("copy kind") == "HtoD"
          and near(copies["HtoD"]["args"].get("memory bandwidth (GB/s)", 0), 4096 / 1024.0, 0.01),
          "a copy's name, bytes, kind and bandwidth: %s" % copies.get("HtoD"))
    peer = copies.get("PtoP", {}).get("args", {})
    check(peer.get("src device") == 1 and peer.get("dst device") == 0 and peer.get("bytes") == 8192,
          "the peer copy names its devices: %s" % peer)
    sets = by_cat["gpu_memset"]
    check(len(sets) == 1 and sets[0]["name"] == "Memset (Device)" and sets[0]["args"].get("bytes") == 4096,
          "one memset of 4096 bytes")
    calls = collections.Counter((e["cat"], e["name"]) for e in by_cat["cuda_runtime"] + by_cat["cuda_driver"])
    check(calls[("cuda_driver", "cuLaunchKernel")] == 24 and calls[("cuda_runtime", "cudaLaunchKernel")] == 12
          and calls[("cuda_runtime", "cudaMemcpy")] == 6 and calls[("cuda_driver", "cuGraphLaunch")] == 1
          and calls[("cuda_driver", "cuMemAlloc_v2")] == 1 and calls[("cuda_driver", "cuStreamSynchronize")] == 16,
          "runtime and driver calls, named without the runtime's version suffix: %s" % dict(calls))
    syncs = collections.Counter(e["name"] for e in by_cat["cuda_sync"])
    check(syncs == {"Stream Sync": 16, "Context Sync": 1}, "synchronisations: %s" % dict(syncs))
    # CUPTI's overheads: the module's instrumentation on the thread that called cuInit (the main
    # thread: its tid is the pid), the process's resources on tid 0, 5 µs each. (Without OS
    # thread ids from CUPTI, a thread that never recorded a range keeps CUPTI's number.)
    pid = by_cat["cuda_driver"][0]["pid"] if by_cat["cuda_driver"] else None
    def overhead_tid_ok(e):
        if e["name"] != "Instrumentation":
            return e["tid"] == 0
        return e["tid"] == pid or (scenario == "no-thread-id-type" and e["tid"] != 0)
    overheads = sorted((e["name"], e["pid"] == pid, overhead_tid_ok(e), near(e["dur"] * 1000, 5000))
                       for e in by_cat["overhead"])
    check(overheads == [("Instrumentation", True, True, True), ("Resource", True, True, True)],
          "CUPTI's overheads, in the process, on the thread CUPTI names: %s"
          % [(e["name"], e["pid"], e["tid"], e["dur"]) for e in by_cat["overhead"]])
    mem = [e for e in ev if e.get("name") == "[memory]" and e["args"].get("Device Type") == 1]
    check([(e["args"]["Bytes"], e["args"]["Total Allocated"], e["args"]["Device Id"]) for e in mem]
          == [(1 << 20, 1 << 20, 0), (-(1 << 20), 0, 0)], "GPU memory: one MiB allocated and freed on device 0")
    # ac2g: a start at each launch call, a finish at each piece of device work, by correlation.
    starts = {e["id"]: e for e in ev if e.get("cat") == "ac2g" and e.get("ph") == "s"}
    finishes = [e for e in ev if e.get("cat") == "ac2g" and e.get("ph") == "f"]
    calls_by_corr = {e["args"]["correlation"]: e for e in by_cat["cuda_runtime"] + by_cat["cuda_driver"]}
    work = by_cat["kernel"] + by_cat["gpu_memcpy"] + by_cat["gpu_memset"]
    check(len(finishes) == len(work) == 50 and len(starts) == 48,
          "ac2g flows: 50 finishes (one per device work) from 48 launches (%d, %d)" % (len(finishes), len(starts)))
    check(all(s["tid"] == calls_by_corr[i]["tid"] and s["ts"] == calls_by_corr[i]["ts"] for i, s in starts.items()),
          "each flow starts at its launch call")
    # Every launch call nests in the innermost NVTX range open on its thread.
    ranges = [e for e in by_cat["nvtx"]]
    def innermost(call):
        inside = [r for r in ranges if r["tid"] == call["tid"] and r["ts"] <= call["ts"]
                  and call["ts"] + call["dur"] <= r["ts"] + r["dur"]]
        return min(inside, key=lambda r: r["dur"])["name"] if inside else None
    launches = collections.Counter((innermost(e), e["name"]) for e in by_cat["cuda_runtime"] + by_cat["cuda_driver"]
                                   if "Launch" in e["name"])
    check(launches == {("layer_a", "cuLaunchKernel"): 24, ("layer_b", "cudaLaunchKernel"): 12,
                       ("copies", "cuGraphLaunch"): 1},
          "launches nest in their ranges (CUPTI's threads: %s): %s"
          % ("pthread_self" if scenario else "OS ids", dict(launches)))
    if scenario:
        return d
    # GPU projections: per range instance and stream, first start to last end of its work.
    ann = collections.Counter(e["name"] for e in by_cat["gpu_user_annotation"])
    check(ann["layer_a"] == 6 and ann["layer_b"] == 6 and ann["forward"] == 12,
          "gpu_user_annotation: one per range instance and stream it launched on: %s" % dict(ann))
    kernel_by_corr = {e["args"]["correlation"]: e for e in by_cat["kernel"]}
    spans = set()
    for rng in (x for x in ranges if x["name"] == "layer_a"):
        ks = [kernel_by_corr[c["args"]["correlation"]] for c in by_cat["cuda_driver"]
              if c["name"] == "cuLaunchKernel" and c["tid"] == rng["tid"]
              and rng["ts"] <= c["ts"] <= rng["ts"] + rng["dur"]]
        if ks:
            first = min(k["ts"] for k in ks)
            spans.add((ks[0]["pid"], ks[0]["tid"], round(first, 3),
                       round(max(k["ts"] + k["dur"] for k in ks) - first, 3)))
    projected = {(e["pid"], e["tid"], round(e["ts"], 3), round(e["dur"], 3))
                 for e in by_cat["gpu_user_annotation"] if e["name"] == "layer_a"}
    check(len(spans) == 6 and projected == spans,
          "each layer_a's projection spans its 4 kernels' first start to last end (%s vs %s)"
          % (sorted(projected)[:2], sorted(spans)[:2]))
    check([p["numSms"] for p in d.get("deviceProperties", [])] == [132, 132],
          "deviceProperties lists both devices")
    names = {(e["pid"], e["args"]["name"]) for e in ev if e.get("ph") == "M" and e["name"] == "process_name"}
    check((0, "GPU 0") in names and (1, "GPU 1") in names, "device processes are named GPU 0 and GPU 1")
    # The table: CUDA time per NVTX range, from the kernels its launches started.
    check_table(r.stdout, [("layer_a", 72.0, 6), ("layer_b", 24.0, 6), ("forward", 96.0, 6),
                           ("gemm_kernel", 72.0, 24), ("relu_kernel", 24.0, 12)])
    # What works on Kineto traces works on the live run: the memory timeline, HTA's kernel
    # breakdown, the Chrome export read back.
    lua = os.path.join(tmp, "analyses.lua")
    with open(lua, "w") as f:
        f.write(ANALYSES)
    r = subprocess.run([profsh, lua, out, os.path.join(tmp, "export.json")], capture_output=True, text=True,
                       timeout=120)
    lines = dict(l.split("\t", 1) for l in r.stdout.splitlines() if "\t" in l)
    check(lines.get("memory") == "cuda:0 1048576 0", "memory_timeline: cuda:0 peaks at 1 MiB, 0 at the end (%s)"
          % (lines.get("memory") or r.stderr[-300:]))
    check(lines.get("breakdown") == "gemm_kernel graph_node relu_kernel",
          "HTA's kernel breakdown lists the computation kernels (%s)" % lines.get("breakdown"))
    check(lines.get("export") == "39 39", "the Chrome export reads back with its 39 kernels (%s)" % lines.get("export"))
    return d


def check_table(stdout, want):
    """The table's CUDA total and call count of each (name, µs, calls) of `want`."""
    rows = collections.defaultdict(list)
    header = None
    for line in stdout.splitlines():
        cols = re.split(r"\s{2,}", line.strip())
        if cols and cols[0] == "Name":
            header = cols
        elif header and len(cols) == len(header):
            rows[cols[0]].append(dict(zip(header, cols)))
    def us(text):
        return float(text.replace("us", "")) if text.endswith("us") and not text.endswith("ms") else -1
    for name, total, calls_n in want:
        got = [row for row in rows.get(name, []) if row.get("# of Calls") == str(calls_n)
               and near(us(row.get("CUDA total", "")), total)]
        check(len(got) >= 1, "table: %s has CUDA total %.3f us over %d calls (%s)"
              % (name, total, calls_n, [(x.get("CUDA total"), x.get("# of Calls")) for x in rows.get(name, [])]))


def check_two_processes(profsh, workload, cupti, tmp):
    """Two CUDA processes in one run (the workload forks): each CUPTI numbers its correlations
    from 1, yet every kernel links to its own process's launch and range."""
    out = os.path.join(tmp, "fork.json")
    r = run(profsh, workload, cupti, out, "3", "fork", table=True)
    check(r.returncode == 0, "a forking CUDA workload runs under profsh (%s)" % r.stderr[-400:])
    check_table(r.stdout, [("layer_a", 72.0, 6), ("layer_b", 24.0, 6), ("child_layer_a", 12.0, 1),
                           ("child_layer_b", 4.0, 1), ("gemm_kernel", 84.0, 28)])
    ev = events(out)["traceEvents"]
    kernels = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"]
    calls = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")]
    corr = collections.Counter(e["args"]["correlation"] for e in calls)
    check(len(kernels) == 46 and all(corr[k["args"]["correlation"]] == 1 for k in kernels)
          and all(k["args"]["External id"] == k["args"]["correlation"] for k in kernels),
          "46 kernels, each naming exactly one launch call by its correlation")
    launch_pid = {e["args"]["correlation"]: e["pid"] for e in calls}
    pids = {launch_pid.get(k["args"]["correlation"]) for k in kernels}
    track_of = collections.defaultdict(set)  # launching process -> device track pids
    for k in kernels:
        track_of[launch_pid.get(k["args"]["correlation"])].add(k["pid"])
    check(len(pids) == 2 and None not in pids and not set.intersection(*track_of.values()),
          "the two processes' kernels are on distinct device tracks: %s" % dict(track_of))
    starts = [e for e in ev if e.get("cat") == "ac2g" and e.get("ph") == "s"]
    check(len(starts) == len({e["id"] for e in starts}) == 55,
          "ac2g: 55 flows with distinct ids (%d, %d)" % (len(starts), len({e["id"] for e in starts})))
    names = sorted(e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"
                   and e["args"]["name"].startswith("GPU"))
    # CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM: a thread the collector saw no event of is still
    # named by its OS id.
    loose = re.search(r"loose thread (\d+)", r.stderr)
    check(loose and [e["name"] for e in calls if e["tid"] == int(loose.group(1))]
          == ["cuLaunchKernel", "cuCtxSynchronize"],
          "a thread known only to CUPTI has its OS id (%s)" % (loose and loose.group(0)))
    named = [int(m.group(1)) for m in (re.match(r"GPU \d \(pid (\d+)\)$", n) for n in names) if m]
    check(len(names) == 3 and "GPU 0" in names and named and set(named) < pids,
          "the second process's devices are named with its pid: %s" % names)


ANALYSES = r"""
local t = profsh.load(arg[1])
local m = t:memory_timeline()
for _, p in pairs(m.processes) do
  for dev, d in pairs(p.devices or {}) do print("memory", dev .. " " .. d.peak .. " " .. d.at_end) end
end
local _, by_kernel = t:kernel_breakdown{duration_ratio = 1.0, num_kernels = 10}
local names = {}
for _, row in ipairs(by_kernel) do
  if row.kernel_type == "COMPUTATION" then names[#names + 1] = row.name end
end
table.sort(names)
print("breakdown", table.concat(names, " "))
local function kernels(trace)
  local n = 0
  for _, e in ipairs(trace:events{limit = 100000}) do if e.cat == "kernel" then n = n + 1 end end
  return n
end
t:export_chrome_trace(arg[2])
print("export", kernels(t) .. " " .. kernels(profsh.load(arg[2])))
"""


def check_drops(profsh, workload, cupti, tmp, basic):
    out = os.path.join(tmp, "full.json")
    r = run(profsh, workload, cupti, out, env={"PROFSH_CUPTI_BUFFERS": "1", "PROFSH_CUPTI_BUFFER_KB": "4"})
    m = re.search(r"(\d+) GPU activity records were dropped by CUPTI", r.stderr)
    refused = re.search(r"(\d+) requests of CUPTI for a buffer were refused", r.stderr)
    check(r.returncode == 0 and m and refused and int(m.group(1)) > 0,
          "a full pool of one 4 KiB buffer: drops and refusals reported (%s)" % r.stderr[-500:])
    def gpu_records(doc):
        ev = doc["traceEvents"]
        n = sum(1 for e in ev if e.get("ph") == "X" and e.get("cat") in
                ("kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver", "cuda_sync", "overhead"))
        return n + sum(1 for e in ev if e.get("name") == "[memory]" and e["args"].get("Device Type") == 1)
    if m:
        d = events(out)
        check(gpu_records(d) + int(m.group(1)) == gpu_records(basic),
              "kept + dropped GPU records = those of the full run (%d + %s = %d)"
              % (gpu_records(d), m.group(1), gpu_records(basic)))
        check(d["profsh"].get("gpu_records_dropped") == int(m.group(1)), "the drops are in the trace's metadata")
    r = run(profsh, workload, cupti, os.path.join(tmp, "drop.json"), env={"FAKE_CUPTI_SCENARIO": "drop=7"})
    check("7 GPU activity records were dropped by CUPTI" in r.stderr and "39 kernels" in r.stderr,
          "CUPTI's own dropped count is read and reported (%s)" % r.stderr[-300:])
    # Kernels whose end CUPTI did not know: skipped and counted, not drawn at the far past.
    out = os.path.join(tmp, "untimed.json")
    r = run(profsh, workload, cupti, out, env={"FAKE_CUPTI_SCENARIO": "untimed=2"})
    d = events(out) if r.returncode == 0 else {"traceEvents": []}
    ks = [e for e in d["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel"]
    overheads = [e for e in d["traceEvents"] if e.get("cat") == "overhead"]
    check("37 kernels" in r.stderr and "3 GPU kernels, copies, sets or CUPTI overheads had no valid start or "
          "end time" in r.stderr and len(ks) == 37 and all(e["dur"] >= 0 and e["ts"] >= 0 for e in ks)
          and len(overheads) == 2,
          "kernels and an overhead without times are skipped and counted (%s)" % r.stderr[-300:])


def check_refusals(profsh, workload, cupti, tmp):
    for scenario, line in [("other-subscriber", "CUPTI is already used by another tool"),
                           ("version=120000", "CUPTI API version 120000, profsh needs 130000 to 139999"),
                           ("version=140000", "CUPTI API version 140000, profsh needs 130000 to 139999")]:
        out = os.path.join(tmp, "refused.json")
        r = run(profsh, workload, cupti, out, env={"FAKE_CUPTI_SCENARIO": scenario})
        d = events(out) if r.returncode == 0 else {"traceEvents": []}
        kernels = sum(1 for e in d["traceEvents"] if e.get("cat") == "kernel")
        ranges = sum(1 for e in d["traceEvents"] if e.get("cat") == "nvtx" and e.get("name") == "forward")
        check(r.returncode == 0 and r.stderr.count(line) == 1 and kernels == 0 and ranges == 6,
              "%s: one summary line, no kernels, the NVTX ranges kept (%d kernels, %d ranges; %s)"
              % (scenario, kernels, ranges, r.stderr[-300:]))
    # A failure after cuptiSubscribe gives CUPTI back: the workload's own profiler may have it.
    r = run(profsh, workload, cupti, os.path.join(tmp, "unsub.json"),
            env={"FAKE_CUPTI_SCENARIO": "register-fails,user-subscribes"})
    check(r.returncode == 0 and r.stderr.count("cuptiActivityRegisterCallbacks failed") == 1
          and "the workload's own CUPTI subscriber: accepted" in r.stderr,
          "a failed setup unsubscribes, so the workload's own CUPTI subscriber is accepted (%s)"
          % r.stderr[-300:])
    not_cupti = os.path.abspath(__file__)
    r = run(profsh, workload, not_cupti, os.path.join(tmp, "nocupti.json"))
    check(r.returncode == 0 and r.stderr.count("libcupti could not be loaded") == 1,
          "a libcupti that does not load: one summary line (%s)" % r.stderr[-300:])
    # A library that loads but is no CUPTI (the test driver itself).
    driver = os.path.join(os.path.dirname(cupti), "libcuda.so.1")
    r = run(profsh, workload, driver, os.path.join(tmp, "notcupti.json"))
    check(r.returncode == 0 and r.stderr.count("the libcupti loaded lacks cuptiGetVersion") == 1,
          "a library without CUPTI's entry points: one summary line naming the first missing (%s)"
          % r.stderr[-300:])
    r = run(profsh, workload, "/nonexistent/libcupti.so", os.path.join(tmp, "x.json"))
    check(r.returncode != 0 and "/nonexistent/libcupti.so is not a file" in r.stderr,
          "--cupti naming no file is an error (%s)" % r.stderr[-200:])


SCHEDULE = r"""
local workload, cupti = arg[1], arg[2]
local lines = {}
local p = profsh.profile{
  activities = {"nvtx", "cuda"}, cupti = cupti,
  schedule = profsh.schedule{wait = 1, warmup = 0, active = 1, ["repeat"] = 1},
  step_marker = "^step$",
  on_trace_ready = function(t)
    local names = {}
    for _, a in ipairs(t:key_averages()) do
      names[#names + 1] = string.format("%s=%d/%.0f", a.key, a.count, a.cuda_time_total)
    end
    table.sort(names)
    lines[#lines + 1] = table.concat(names, ",")
  end}
local status = p:run{workload, "4", "steps"}
print("status", status)
for _, l in ipairs(lines) do print(l) end
"""


def check_schedule(profsh, workload, cupti, tmp):
    path = os.path.join(tmp, "schedule.lua")
    with open(path, "w") as f:
        f.write(SCHEDULE)
    r = subprocess.run([profsh, path, workload, cupti], capture_output=True, text=True, timeout=120)
    out = r.stdout.splitlines()
    check(r.returncode == 0 and out[:1] == ["status\t0"] and len(out) == 2,
          "a scheduled run with the cuda activity gives one window (%s)" % (r.stdout + r.stderr)[-500:])
    if len(out) == 2:
        got = collections.defaultdict(list)  # a range's row and its GPU projection's share a key
        for item in out[1].split(","):
            key, value = item.split("=")
            got[key].append(value.split("/"))
        # Step 1: 4 gemm and 2 relu launches, and the 3 ms tail kernel launched at its end, which
        # finishes after the next step began (after the window's last CPU event).
        want = {"step": "1/3016", "forward": "1/16", "layer_a": "1/12", "layer_b": "1/4",
                "gemm_kernel": "4/12", "relu_kernel": "2/4", "tail_kernel": "1/3000",
                "cuLaunchKernel": "5/0", "cudaLaunchKernel": "2/0"}
        for key, value in want.items():
            count, cuda = value.split("/")
            ok = any(g[0] == count and near(float(g[1]), float(cuda), 0.003) for g in got.get(key, []))
            check(ok, "the window: %s %s calls, %s us of CUDA time (%s)" % (key, count, cuda, got.get(key)))


MEMORY = r"""
local workload, cupti = arg[1], arg[2]
local p = profsh.profile{
  activities = {"nvtx", "cuda"}, cupti = cupti,
  schedule = profsh.schedule{wait = 0, warmup = 0, active = 1, ["repeat"] = 2},
  step_marker = "^step$",
  on_trace_ready = function(t)
    local totals = {}
    for _, e in ipairs(t:events{limit = 100000}) do
      if e.name == "[memory]" and e.args["Device Type"] == 1 then
        totals[#totals + 1] = string.format("%d", e.args["Total Allocated"])
      end
    end
    print("window", table.concat(totals, " "))
  end}
print("status", p:run{workload, "3", "steps"})
"""


def check_memory_windows(profsh, workload, cupti, tmp):
    """GPU memory's Total Allocated runs on across windows (a step's 1 MiB stays allocated)."""
    path = os.path.join(tmp, "memory.lua")
    with open(path, "w") as f:
        f.write(MEMORY)
    r = subprocess.run([profsh, path, workload, cupti], capture_output=True, text=True, timeout=120)
    windows = [l for l in r.stdout.splitlines() if l.startswith("window")]
    check(r.returncode == 0 and windows == ["window\t1048576", "window\t2097152"],
          "Total Allocated per device runs on across windows (%s)" % (r.stdout + r.stderr)[-400:])


def check_image_ends(profsh, workload, cupti, tmp):
    """exec and _exit skip exit()'s handlers: CUPTI's last, partly filled buffer is taken before;
    after an exec that fails, CUPTI goes on (one more kernel and its launch)."""
    for mode, work in (("_exit", "39 kernels, 10 copies, 1 set, 67 CUDA calls"),
                       ("exec", "40 kernels, 10 copies, 1 set, 68 CUDA calls")):
        r = run(profsh, workload, cupti, os.path.join(tmp, "end%s.json" % mode), "3", mode)
        summary = [l for l in r.stderr.splitlines() if "GPU:" in l]
        check(r.returncode == 0 and summary and work in summary[0],
              "a workload ending in %s keeps its last GPU records: %s" % (mode, summary or r.stderr[-300:]))


def check_exit_in_handler(profsh, workload, cupti, tmp):
    """A handler that calls _exit while its thread is inside CUPTI (holding CUPTI's lock): the
    process still ends (CUPTI's flush is the drain thread's, waited for 200 ms at most), with
    its status, and the trace loads with what was drained before."""
    out = os.path.join(tmp, "handler_exit.json")
    start = time.monotonic()
    try:
        r = run(profsh, workload, cupti, out, "3", "handler_exit",
                env={"FAKE_CUPTI_SCENARIO": "signal-in-record=30"})
    except subprocess.TimeoutExpired:
        check(False, "an _exit in a handler that interrupted CUPTI does not hang the workload (timed out)")
        return
    took = time.monotonic() - start
    check(r.returncode == 3 and took < 30 and os.path.exists(out),
          "an _exit in a handler that interrupted CUPTI ends the workload, status 3, in %.1f s, and "
          "the trace is saved (%s)" % (took, r.stderr[-300:]))


def check_workloads_cupti(profsh, workload, cupti, tmp):
    """A libcupti the workload loaded itself (torch's CUDA 12 wheels bring one) is the one used:
    no second CUPTI in the process; one of another version is said, and nothing recorded."""
    own = os.path.join(tmp, "wheel", "libcupti.so.13")
    os.makedirs(os.path.dirname(own), exist_ok=True)
    shutil.copy(cupti, own)
    r = run(profsh, workload, cupti, os.path.join(tmp, "own13.json"), env={"FAKE_CUDA_LOAD_CUPTI": own})
    summary = [l for l in r.stderr.splitlines() if "GPU:" in l]
    check(r.returncode == 0 and summary and "39 kernels, 10 copies, 1 set, 67 CUDA calls" in summary[0],
          "the workload's own CUPTI 13 is used, not a second copy (%s)" % (summary or r.stderr[-300:]))
    r = run(profsh, workload, cupti, os.path.join(tmp, "own12.json"),
            env={"FAKE_CUDA_LOAD_CUPTI": own, "FAKE_CUPTI_SCENARIO": "version=120800"})
    check(r.returncode == 0 and "the workload loaded its own libcupti (%s), of CUPTI API version 120800" % own
          in r.stderr and "GPU:" not in r.stderr,
          "the workload's own CUPTI 12 is named, and profsh records no GPU activity (%s)" % r.stderr[-400:])


LATE = r"""
local workload, cupti, wait, linger = arg[1], arg[2], tonumber(arg[3]), arg[4]
local p = profsh.profile{
  activities = {"nvtx", "cuda"}, cupti = cupti, gpu_wait_ms = wait,
  schedule = profsh.schedule{wait = 1, warmup = 0, active = 1, ["repeat"] = 1},
  step_marker = "^step$",
  on_trace_ready = function(t)
    local n = {}
    for _, e in ipairs(t:events{limit = 100000}) do
      if e.cat == "kernel" then n[e.name] = (n[e.name] or 0) + 1 end
    end
    local meta = t.metadata.profsh or {}
    print("window", (n.tail_kernel or 0) .. " " .. (n.gemm_kernel or 0) .. " "
          .. (meta.gpu_launches_unreported or 0))
    print("warnings", table.concat(t.warnings, "; "))
    io.stdout:flush()
  end}
local status = p:run{workload, "4", "steps", linger}
print("status", status .. " " .. p.summary.gpu_launches_unreported .. " " .. p.windows)
"""


def run_late(profsh, workload, cupti, tmp, scenario, wait_ms, linger_ms):
    """The LATE script under FAKE_CUPTI_SCENARIO: its lines with the seconds since the start."""
    path = os.path.join(tmp, "late.lua")
    with open(path, "w") as f:
        f.write(LATE)
    env = dict(os.environ, FAKE_CUPTI_SCENARIO=scenario)
    start = time.monotonic()
    p = subprocess.Popen([profsh, path, workload, cupti, str(wait_ms), str(linger_ms)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    for line in p.stdout:
        lines.append((time.monotonic() - start, line.rstrip("\n")))
    err = p.stderr.read()
    p.wait(timeout=60)
    return p.returncode, lines, err


def check_late(profsh, workload, cupti, tmp):
    """A window waits for the GPU work launched in it (gpu_launch_waits.h): step 1's tail kernel,
    whose record CUPTI hands over 1 s after it was made (far past the 200 ms windows were once
    held), is in step 1's window; the cuCtxGetDevice and cuMemAlloc calls of the step, which
    launch nothing, are not waited for (the window comes long before the 10 s bound)."""
    rc, lines, err = run_late(profsh, workload, cupti, tmp, "late=tail_kernel:1000", 10000, 3000)
    windows = [(t, l.split("\t")[1]) for t, l in lines if l.startswith("window\t")]
    status = [l for _, l in lines if l.startswith("status\t")]
    check(rc == 0 and status == ["status\t0 0 1"] and [w for _, w in windows] == ["1 4 0"],
          "a kernel reported 1 s late is in its launch's window (%s; %s)" % (lines, err[-300:]))
    check(len(windows) == 1 and 0.9 < windows[0][0] < 2.7,
          "the window is handed over once its kernel reported, while the workload lingers "
          "(after %.2f s; the workload ran 3 s)" % (windows[0][0] if windows else -1))
    # A launch whose kernel never reports: the window waits for the bound (here 300 ms), then
    # is handed over, with the launch counted, while the workload still runs.
    rc, lines, err = run_late(profsh, workload, cupti, tmp, "lost=tail_kernel", 300, 3000)
    windows = [(t, l.split("\t")[1]) for t, l in lines if l.startswith("window\t")]
    status = [l for _, l in lines if l.startswith("status\t")]
    warnings = [l for _, l in lines if l.startswith("warnings\t")]
    check(rc == 0 and [w for _, w in windows] == ["0 4 1"] and status == ["status\t0 1 1"]
          and len(warnings) == 1 and "1 GPU launch of a window never reported its kernel" in warnings[0],
          "a launch whose kernel never reports is counted, in the window's metadata and "
          "warnings and the summary (%s; %s)" % (lines, err[-400:]))
    check(len(windows) == 1 and windows[0][0] < 2.5,
          "that window is handed over once the 300 ms bound passed, before the workload ends "
          "(after %.2f s; the workload ran 3 s)" % (windows[0][0] if windows else -1))
    # A process that ends flushes everything: a window still waiting is handed over then, with
    # what never came counted, not after the 10 s bound.
    rc, lines, err = run_late(profsh, workload, cupti, tmp, "lost=tail_kernel", 10000, 0)
    windows = [(t, l.split("\t")[1]) for t, l in lines if l.startswith("window\t")]
    status = [l for _, l in lines if l.startswith("status\t")]
    check(rc == 0 and [w for _, w in windows] == ["0 4 1"] and status == ["status\t0 1 1"]
          and windows[0][0] < 5.0,
          "a window still waiting when its process ends is handed over at the end, its missing "
          "launch counted (%s; %s)" % (lines, err[-300:]))


def check_killed(profsh, workload, cupti, tmp):
    out = os.path.join(tmp, "killed.json")
    cmd = [profsh, "run", "--activities", "nvtx,cuda", "--cupti", cupti, "-o", out, "--no-table", "--",
           workload, "1000", "slow"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    # The workload: profsh's only child.
    children = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split()
    for c in children:
        os.kill(int(c), signal.SIGKILL)
    _, err = p.communicate(timeout=60)
    d = events(out) if os.path.exists(out) else {"traceEvents": [], "profsh": {}}
    gemm = sum(1 for e in d["traceEvents"] if e.get("name") == "gemm_kernel")
    launches = sum(1 for e in d["traceEvents"] if e.get("name") == "cuLaunchKernel")
    check(len(children) == 1 and d["profsh"].get("streams_cut_short") == 1 and gemm >= 8 and gemm == launches,
          "a SIGKILLed workload keeps the GPU records of its flushed buffers (%d kernels, %d launches; %s)"
          % (gemm, launches, err[-300:]))


def check_event_waits(profsh, workload, cupti, tmp):
    """Event Sync and Stream Wait Event name the cudaEventRecord they wait for (its correlation)
    and its stream, as Kineto's wait_on_* arguments do, so that the critical path follows them."""
    out = os.path.join(tmp, "events.json")
    r = run(profsh, workload, cupti, out, "3", "events")
    check(r.returncode == 0, "the events workload runs under profsh (%s)" % r.stderr[-400:])
    if r.returncode != 0:
        return
    ev = [e for e in events(out)["traceEvents"] if e.get("ph") == "X"]
    records = {e["args"]["correlation"]: e for e in ev
               if e.get("cat") == "cuda_runtime" and e["name"] == "cudaEventRecord"}
    kernels = {e["args"]["correlation"]: e for e in ev if e.get("cat") == "kernel"}
    waits = [e for e in ev if e.get("cat") == "cuda_sync" and e["name"] in ("Stream Wait Event", "Event Sync")]
    kinds = collections.Counter(e["name"] for e in waits)
    check(len(records) == 12 and kinds == {"Stream Wait Event": 6, "Event Sync": 6},
          "12 event records, 6 stream waits and 6 event syncs (%d, %s)" % (len(records), dict(kinds)))
    wrong = []
    for w in waits:
        a = w["args"]
        rec = records.get(a.get("wait_on_cuda_event_record_corr_id"))
        # The recorded stream: the one of the last kernel launched before the record on its
        # thread's device; the stream wait records after the gemms (stream 1), the sync after
        # the tail (stream 2).
        if rec is None or a.get("wait_on_stream") is None or a.get("wait_on_cuda_event_id") is None:
            wrong.append(("unnamed", a))
            continue
        if rec["ts"] > w["ts"] or rec["tid"] != next(
                (c["tid"] for c in ev if c.get("cat") == "cuda_runtime" and c["args"].get("correlation") == a["correlation"]),
                None):
            wrong.append(("not the thread's earlier record", a))
        want_stream = {k["tid"] for k in kernels.values()
                       if k["name"] == ("gemm_kernel" if w["name"] == "Stream Wait Event" else "tail_kernel")
                       and k["pid"] == w["pid"]}
        if {a["wait_on_stream"]} != want_stream:
            wrong.append(("stream", a, sorted(want_stream)))
    check(waits and not wrong, "each wait names the cudaEventRecord before it and its stream: %s" % wrong[:2])
    cp = subprocess.run([profsh, "critical-path", out], capture_output=True, text=True, timeout=120)
    check(cp.returncode == 0 and "name no cudaEventRecord" not in cp.stdout + cp.stderr,
          "the critical path follows every wait (%s)" % (cp.stdout + cp.stderr)[-300:])


def main():
    profsh, workload, cupti = sys.argv[1:4]
    wanted = set(sys.argv[4:])
    with tempfile.TemporaryDirectory(prefix="profsh-cuda-") as tmp:
        basic = check_basic(profsh, workload, cupti, tmp)
        check_basic(profsh, workload, cupti, tmp, "no-thread-id-type")
        if not wanted or "processes" in wanted:
            check_two_processes(profsh, workload, cupti, tmp)
        if not wanted or "drops" in wanted:
            check_drops(profsh, workload, cupti, tmp, basic)
        if not wanted or "refusals" in wanted:
            check_refusals(profsh, workload, cupti, tmp)
        if not wanted or "schedule" in wanted:
            check_schedule(profsh, workload, cupti, tmp)
        if not wanted or "memory" in wanted:
            check_memory_windows(profsh, workload, cupti, tmp)
        if not wanted or "own-cupti" in wanted:
            check_workloads_cupti(profsh, workload, cupti, tmp)
        if not wanted or "ends" in wanted:
            check_image_ends(profsh, workload, cupti, tmp)
            check_exit_in_handler(profsh, workload, cupti, tmp)
        if not wanted or "killed" in wanted:
            check_killed(profsh, workload, cupti, tmp)
        if not wanted or "late" in wanted:
            check_late(profsh, workload, cupti, tmp)
        if not wanted or "events" in wanted:
            check_event_waits(profsh, workload, cupti, tmp)
    print("%d failed" % len(failures) if failures else "all passed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
