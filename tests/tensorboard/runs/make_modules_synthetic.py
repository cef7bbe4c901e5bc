#!/usr/bin/env python3
"""Writes modules_synthetic/worker0.pt.trace.json: a Kineto trace shaped as torch writes with
with_stack=True (no torch here writes python_function events: Debian 12's torch 1.13 has no
Kineto and the Debian 13 root's torch 2.6 crashes in its Python tracer). Two steps; in each,
nn.Module: Sequential_0 runs Linear_0 (aten::linear launching a kernel) and ReLU_0
(aten::relu, no device work) through their forward functions."""
import json
import os

events = [{"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": 1, "tid": 1,
           "ts": 0, "dur": 2100}]
py_id = [0]


def py(name, ts, dur, parent, module=None):
    py_id[0] += 1
    args = {"Python id": py_id[0], "Python parent id": parent, "Python thread": 0}
    if module is not None:
        args["Python module id"] = module
    events.append({"ph": "X", "cat": "python_function", "name": name, "pid": 1, "tid": 1,
                   "ts": ts, "dur": dur, "args": args})
    return py_id[0]


def op(name, ts, dur, ext):
    events.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts,
                   "dur": dur, "args": {"External id": ext}})


for step in range(2):
    base = 50 + step * 1000
    events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step + 1}",
                   "pid": 1, "tid": 1, "ts": base, "dur": 900, "args": {"External id": 100 + step}})
    root = py("train.py(20): <module>", base + 5, 880, 0)
    seq = py("nn.Module: Sequential_0", base + 10, 600, root, 1000)
    fwd = py("torch/nn/modules/container.py(215): forward", base + 12, 590, seq)
    lin = py("nn.Module: Linear_0", base + 20, 300, fwd, 1001)
    lfwd = py("torch/nn/modules/linear.py(114): forward", base + 22, 290, lin)
    ext = 10 * (step + 1)
    op("aten::linear", base + 30, 250, ext)
    op("aten::addmm", base + 40, 200, ext + 1)
    events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                   "tid": 1, "ts": base + 60, "dur": 20,
                   "args": {"External id": ext + 1, "correlation": ext + 1}})
    events.append({"ph": "X", "cat": "kernel", "name": "sgemm_kernel", "pid": 0, "tid": 7,
                   "ts": base + 100, "dur": 400,
                   "args": {"External id": ext + 1, "correlation": ext + 1, "device": 0,
                            "stream": 7, "grid": [1, 1, 1], "block": [128, 1, 1]}})
    relu = py("nn.Module: ReLU_0", base + 350, 200, fwd, 1002)
    rfwd = py("torch/nn/modules/activation.py(103): forward", base + 352, 190, relu)
    op("aten::relu", base + 360, 150, ext + 2)
    op("aten::clamp_min", base + 370, 100, ext + 3)
    py("torch/nn/functional.py(1500): relu", base + 355, 2, rfwd)
    py("torch/nn/functional.py(2000): linear", base + 25, 2, lfwd)
    op("aten::sum", base + 700, 50, ext + 4)

events.sort(key=lambda e: e["ts"])
trace = {"schemaVersion": 1, "deviceProperties": [
    {"id": 0, "name": "Synthetic GPU", "totalGlobalMem": 16 << 30, "computeMajor": 8,
     "computeMinor": 0, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
     "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32,
     "sharedMemPerBlock": 49152, "sharedMemPerMultiprocessor": 167936, "numSms": 108,
     "sharedMemPerBlockOptin": 166912}],
         "traceEvents": events}
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "modules_synthetic",
                   "worker0.pt.trace.json")
with open(out, "w") as f:
    json.dump(trace, f, indent=0)
