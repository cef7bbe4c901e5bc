"""A small training script for the torch.profiler fallback test (check_fallback.py), with NVTX
ranges through tests/torch2/nvtx_ranges.cpp (its path in PROFSH_TEST_NVTX):
  fallback_workload.py plain         as a user runs it: prints a line, exits with status 3
  fallback_workload.py crash         killed by SIGKILL after its work (no atexit)
  fallback_workload.py torch OUT     the reference: the same under torch.profiler, started right
                                     after `import torch` as profsh's fallback starts it, counts
                                     per (name, input shapes) written to OUT (JSON)
  fallback_workload.py measured OUT  the reference for the capture range: torch.profiler around the
                                     "measured" range only
"""
import ctypes
import json
import os
import signal
import sys
import time

import torch
import torch.nn as nn

mode = sys.argv[1]
nvtx = ctypes.CDLL(os.environ["PROFSH_TEST_NVTX"])
nvtx.profsh_test_push.argtypes = [ctypes.c_char_p]
OPTIONS = dict(record_shapes=True)


def counts(profiler):
    out = {}
    for a in profiler.key_averages(group_by_input_shape=True):
        key = "%s|%s" % (a.key, a.input_shapes)
        out[key] = out.get(key, 0) + a.count
    return out


def build():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 4)), torch.randn(4, 16)


def measured(model, x):
    nvtx.profsh_test_push(b"measured")
    a, b = torch.randn(7, 5), torch.randn(5, 3)
    for _ in range(3):
        nvtx.profsh_test_push(b"step")
        model.zero_grad()
        model(x).sum().backward()
        # The one operator of these shapes, inside a range of its own: it must land inside it.
        nvtx.profsh_test_push(b"around mm")
        torch.mm(a, b)
        nvtx.profsh_test_pop()
        nvtx.profsh_test_pop()
    nvtx.profsh_test_pop()


if mode in ("torch", "measured"):
    from torch.profiler import profile
    if mode == "torch":
        with profile(**OPTIONS) as p:
            measured(*build())
    else:
        model, x = build()
        with profile(**OPTIONS) as p:
            measured(model, x)
    json.dump(counts(p), open(sys.argv[2], "w"))
    sys.exit(0)
measured(*build())
print("workload output: done")
sys.stdout.flush()
if mode == "crash":
    time.sleep(0.2)  # the collector's drain (every 20 ms) writes the ranges first
    os.kill(os.getpid(), signal.SIGKILL)
sys.exit(3)
