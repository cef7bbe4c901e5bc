#!/usr/bin/env python3
"""`profsh stats` and the Lua rows API on a hand-made trace whose reports are computed by hand.

usage: check_stats_and_rows.py PROFSH
"""
import json
import os
import subprocess
import sys
import tempfile

profsh = sys.argv[1]
failures = []


def X(cat, name, ts, dur, tid=1, pid=1, **args):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args:
        e["args"] = args
    return e


# outer [0, 100) holds inner [10, 30), which launches kA; outer launches kB and a copy; a last
# kA is launched outside any range.
EVENTS = [
    X("user_annotation", "outer", 0, 100),
    X("user_annotation", "inner", 10, 20),
    X("cuda_runtime", "cudaLaunchKernel", 12, 4, correlation=1),
    X("kernel", "kA", 40, 10, pid=0, tid=7, device=0, stream=7, correlation=1),
    X("cuda_runtime", "cudaLaunchKernel", 50, 2, correlation=2),
    X("kernel", "kB", 60, 30, pid=0, tid=7, device=0, stream=7, correlation=2),
    X("cuda_runtime", "cudaMemcpyAsync", 55, 3, correlation=3),
    X("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 95, 5, pid=0, tid=7, device=0, stream=7,
      correlation=3, bytes=2000000),
    X("cuda_runtime", "cudaLaunchKernel", 200, 6, correlation=4),
    X("kernel", "kA", 210, 20, pid=0, tid=7, device=0, stream=7, correlation=4),
]

EXPECTED = {
    "cuda_gpu_kern_sum": """Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name
50.0,30000,2,15000.0,15000.0,10000,20000,7071.1,kA
50.0,30000,1,30000.0,30000.0,30000,30000,0.0,kB
""",
    "cuda_api_sum": """Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name
80.0,12000,3,4000.0,4000.0,2000,6000,2000.0,cudaLaunchKernel
20.0,3000,1,3000.0,3000.0,3000,3000,0.0,cudaMemcpyAsync
""",
    "cuda_gpu_mem_time_sum": """Time (%),Total Time (ns),Count,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Operation
100.0,5000,1,5000.0,5000.0,5000,5000,0.0,[CUDA memcpy Host-to-Device]
""",
    "cuda_gpu_mem_size_sum": """Total (MB),Count,Avg (MB),Med (MB),Min (MB),Max (MB),StdDev (MB),Operation
2.000,1,2.000,2.000,2.000,2.000,0.000,[CUDA memcpy Host-to-Device]
""",
    "nvtx_sum": """Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range
83.3,100000,1,100000.0,100000.0,100000,100000,0.0,PushPop,outer
16.7,20000,1,20000.0,20000.0,20000,20000,0.0,PushPop,inner
""",
    "nvtx_kern_sum": """NVTX Range,Style,PID,TID,NVTX Inst,Kern Inst,Total Time (ns),Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Kernel Name
,,1,1,,1,20000,20000.0,20000.0,20000,20000,0.0,kA
inner,PushPop,1,1,1,1,10000,10000.0,10000.0,10000,10000,0.0,kA
outer,PushPop,1,1,1,1,30000,30000.0,30000.0,30000,30000,0.0,kB
""",
    "nvtx_gpu_proj_sum": """Range,Style,Total Proj Time (ns),Total Range Time (ns),Range Instances,Proj Avg (ns),Proj Med (ns),Proj Min (ns),Proj Max (ns),Proj StdDev (ns),Total GPU Ops,Avg GPU Ops,Avg Range Lvl,Avg Num Child
outer,PushPop,60000,100000,1,60000.0,60000.0,60000,60000,0.0,3,3.0,0.0,1.0
inner,PushPop,10000,20000,1,10000.0,10000.0,10000,10000,0.0,1,1.0,1.0,0.0
""",
}


def run(*args, stdin=None):
    return subprocess.run([profsh, *args], capture_output=True, text=True, input=stdin)


def expect(cond, what, detail=""):
    if not cond:
        failures.append(f"{what}\n{detail}")


with tempfile.TemporaryDirectory() as tmp:
    trace = os.path.join(tmp, "t.json")
    with open(trace, "w") as f:
        json.dump({"traceEvents": EVENTS}, f)

    for report, csv in EXPECTED.items():
        r = run("stats", trace, "--report", report, "--format", "csv")
        expect(r.returncode == 0 and r.stdout == csv, f"stats {report} (csv)",
               f"exit {r.returncode}\n--- got\n{r.stdout}{r.stderr}--- expected\n{csv}")
    r = run("stats", trace)
    expect(r.returncode == 0 and all(f" ** {name}:" in r.stdout for name in EXPECTED),
           "stats without --report prints every report", r.stdout + r.stderr)
    r = run("stats", trace, "--report", "cuda_gpu_kern_sum")
    expect(r.stdout.splitlines()[0].split() == ["Time", "(%)", "Total", "Time", "(ns)", "Instances",
                                                 "Avg", "(ns)", "Med", "(ns)", "Min", "(ns)", "Max",
                                                 "(ns)", "StdDev", "(ns)", "Name"],
           "stats table header", r.stdout)

    # Bad input: a clear message naming what is wrong; usage errors exit 2 (as every profsh
    # command), a trace that does not load 1.
    r = run("stats", trace, "--report", "cuda_gpu_sum")
    expect(r.returncode == 2 and "unknown report 'cuda_gpu_sum'" in r.stderr, "unknown report", r.stderr)
    r = run("stats", trace, "--format", "xml")
    expect(r.returncode == 2 and "unknown format 'xml'" in r.stderr, "unknown format", r.stderr)
    r = run("stats", trace, "--format=csv", "--repotr", "nvtx_sum")
    expect(r.returncode == 2 and "did you mean '--report'" in r.stderr and r.stderr.count("\n") == 2,
           "a mistyped option: one line with a suggestion, and the hint", r.stderr)
    missing = os.path.join(tmp, "missing.json")
    r = run("stats", missing)
    expect(r.returncode == 1 and "missing.json" in r.stderr, "missing trace named", r.stderr)

    # The Lua side: rows are plain tables; :table() prints, :to_csv() writes the same CSV as the
    # command line; notes say why rows are missing; options are checked.
    csv_path = os.path.join(tmp, "kern.csv")
    view_csv_path = os.path.join(tmp, "long_delays.csv")
    script = f"""
local t = profsh.load({json.dumps(trace)})
local k = t:stats("cuda_gpu_kern_sum")
assert(#k == 2 and k[1].Name == "kA" and k[1]["Instances"] == 2, "rows")
assert(k.columns[1] == "Time (%)", "columns")
k:to_csv({json.dumps(csv_path)})
k:table()
local tb = t:temporal_breakdown()
assert(#tb == 1 and tb[1].rank == 0 and tb[1].kernel_time == 190, "temporal " .. tostring(tb[1].kernel_time))
local launches = t:kernel_launch_stats()
assert(#launches == 4 and #launches.short_kernels >= 0, "launch stats")
-- Views are lists of the result's own row tables, and print and write only their rows.
local sel = t:kernel_launch_stats{{runtime_cutoff = 3, launch_delay_cutoff = 20}}
local ld = sel.long_delays
assert(#ld == 2 and ld[1].correlation == 1 and ld[2].correlation == 3, "long_delays")
assert(ld[1] == sel[1] and ld[2] == sel[3], "a view lists the result's row tables")
assert(#sel.long_launches == 2 and sel.long_launches[2] == sel[4], "long_launches")
assert(#sel.short_kernels == 0 and sel.short_kernels.columns[2] == "correlation", "short_kernels")
ld:to_csv({json.dumps(view_csv_path)})
-- table() and to_csv() show what the list holds now: sorted, shortened, edited.
table.sort(ld, function(x, y) return x.correlation > y.correlation end)
ld[1].cpu_duration = 1.5
local text = tostring(ld)
assert(text:find("^rank +correlation") and text:find("\\n +0 +3 +1%.5 ") and
       select(2, text:gsub("\\n", "")) == 3 + #ld.notes, "a sorted, edited view prints so: " .. text)
ld[2].gpu_duration = {{}}
ok, err = pcall(function() return ld:table() end)
assert(not ok and err:find("row 2, column 'gpu_duration' holds a table"), "bad cell: " .. tostring(err))
ok, err = pcall(function() return ld.to_csv("x.csv") end)
assert(not ok and err:find("rows expected"), "to_csv without self: " .. tostring(err))
local a = t:annotation_breakdown()
assert(#a == 0 and a.notes[1]:find("gpu_user_annotation"), "annotation note")
print(tostring(t:comm_comp_overlap()))
local ok, err = pcall(function() return t:kernel_breakdown{{duration_ratio = 2}} end)
assert(not ok and err:find("duration_ratio"), "bad option: " .. tostring(err))
ok, err = pcall(function() return t:idle_time_breakdown{{bogus = 1}} end)
assert(not ok and err:find("bogus"), "unknown option: " .. tostring(err))
ok, err = pcall(function() return t:annotation_breakdown{{allowlist_patterns = "nccl"}} end)
assert(not ok and err:find("allowlist_patterns") and err:find("list of strings"),
       "allowlist not a list: " .. tostring(err))
ok, err = pcall(function() return t:annotation_breakdown{{allowlist_patterns = {{1}}}} end)
assert(not ok and err:find("allowlist_patterns"), "allowlist of numbers: " .. tostring(err))
ok, err = pcall(function() return t:stats("nope") end)
assert(not ok and err:find("unknown report"), "bad report: " .. tostring(err))
"""
    r = run("-e", script)
    expect(r.returncode == 0, "lua rows api", r.stdout + r.stderr)
    expect("kA" in r.stdout and "Time (%)" in r.stdout, "rows:table() prints", r.stdout)
    expect("no communication kernels" in r.stdout, "tostring(rows) shows notes", r.stdout)
    if os.path.exists(csv_path):
        expect(open(csv_path).read() == EXPECTED["cuda_gpu_kern_sum"], "rows:to_csv() = profsh stats csv",
               open(csv_path).read())
    else:
        failures.append("rows:to_csv wrote nothing")
    view_csv = ("rank,correlation,cpu_duration,gpu_duration,launch_delay\n"
                "0,1,4,10,24\n0,3,3,5,37\n")
    got = open(view_csv_path).read() if os.path.exists(view_csv_path) else "(nothing)"
    expect(got == view_csv, "a view's to_csv writes its rows only", got)

# PyProf's kernel table: a matmul forward (a tensor-core kernel), its backward, and a relu.
KERNEL_EVENTS = [
    X("user_annotation", "encoder", 0, 100),
    X("cpu_op", "aten::mm", 5, 20, **{"Input Dims": [[64, 128], [128, 32]],
                                      "Input type": ["float", "float"], "Sequence number": 7}),
    X("cuda_runtime", "cudaLaunchKernel", 6, 2, correlation=11),
    X("kernel", "sm80_xmma_gemm_f32f32_tilesize128x128", 30, 1, pid=0, tid=7, device=0,
      stream=7, correlation=11, grid=[4, 1, 1], block=[128, 1, 1]),
    X("cpu_op", "aten::relu", 40, 10, **{"Input Dims": [[64, 32]], "Input type": ["float"],
                                         "Sequence number": 8}),
    X("cuda_runtime", "cudaLaunchKernel", 41, 2, correlation=12),
    X("kernel", "elementwise_relu", 60, 2, pid=0, tid=7, device=0, stream=7, correlation=12),
    X("cpu_op", "autograd::engine::evaluate_function: MmBackward0", 200, 50),
    X("cpu_op", "aten::mm", 205, 20, **{"Input Dims": [[64, 32], [32, 128]],
                                        "Input type": ["float", "float"]}),
    X("cuda_runtime", "cudaLaunchKernel", 206, 2, correlation=13),
    X("kernel", "ampere_sgemm_64x64_nn", 230, 4, pid=0, tid=7, device=0, stream=7, correlation=13),
]
KERNELS_CSV = """idx,seq,dir,sub,layer,op,kernel,params,sil,tc,device,stream,grid,block,flops,bytes,tflops,gbps,flop_per_byte
0,7,fprop,0,encoder,aten::mm,sm80_xmma_gemm_f32f32_tilesize128x128,"(64,128)float;(128,32)float",1000,1,0,7,"[4,1,1]","[128,1,1]",524288,57344,0.524,57.344,9.143
1,8,fprop,0,encoder,aten::relu,elementwise_relu,"(64,32)float",2000,-,0,7,,,2048,16384,0.001,8.192,0.125
2,,bprop,0,,aten::mm,ampere_sgemm_64x64_nn,"(64,32)float;(32,128)float",4000,0,0,7,,,524288,57344,0.131,14.336,9.143
"""
with tempfile.TemporaryDirectory() as tmp:
    trace = os.path.join(tmp, "k.json")
    with open(trace, "w") as f:
        json.dump({"traceEvents": KERNEL_EVENTS}, f)
    r = run("kernels", trace, "--format", "csv")
    expect(r.returncode == 0 and r.stdout == KERNELS_CSV, "profsh kernels (csv)",
           f"exit {r.returncode}\n--- got\n{r.stdout}{r.stderr}--- expected\n{KERNELS_CSV}")
    script = f"""
local t = profsh.load({json.dumps(trace)})
local k = t:kernel_table()
assert(#k == 3 and k[1].tc == 1 and k[3].tc == 0 and k[3].dir == "bprop", "kernel table")
local extended = t:kernel_table{{tensor_core_patterns = {{"sgemm_64x64"}}}}
assert(extended[3].tc == 1, "user patterns extend the tensor-core list")
"""
    r = run("-e", script)
    expect(r.returncode == 0, "lua kernel_table", r.stdout + r.stderr)
    # Counter tracks in the Chrome export: the queue of stream 7 rises with each launch and falls
    # as the kernels start; the file loads again.
    exported = os.path.join(tmp, "with_counters.json")
    r = run("-e", f"profsh.load({json.dumps(trace)}):export_chrome_trace({json.dumps(exported)}, {{counters = true}})")
    expect(r.returncode == 0, "export_chrome_trace{counters=true}", r.stderr)
    if r.returncode == 0:
        counters = [e for e in json.load(open(exported))["traceEvents"] if e.get("ph") == "C"]
        queue = [(e["ts"], e["args"]["queue_length"]) for e in counters if e["name"] == "queue_length stream 7"]
        expect(queue == [(6, 1), (30, 0), (41, 1), (60, 0), (206, 1), (230, 0)], "queue length counters", str(queue))
        r = run("-e", f"assert(#profsh.load({json.dumps(exported)}) > 0)")
        expect(r.returncode == 0, "exported counters load again", r.stderr)
    r = run("kernels", os.path.join(tmp, "nope.json"))
    expect(r.returncode == 1 and "nope.json" in r.stderr, "kernels: missing trace named", r.stderr)

for f in failures:
    print("FAIL", f)
print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
