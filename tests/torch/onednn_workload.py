"""A small convolution net on the CPU, whose convolutions run in oneDNN (check_itt_shares.py).

oneDNN reports each primitive it runs (convolution, reorder) as an ITT task when an ITT
collector is attached, as profsh's is. Warm-up first; then the measured iterations inside the
range "measured", under torch.profiler when the first argument is a path (its key_averages rows
are written there as JSON), else bare (profsh records it with --capture-range measured).
"""
import json
import sys

import torch
import torch.nn as nn
from torch.autograd.profiler import record_function

torch.manual_seed(0)
torch.set_num_threads(1)
model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.Conv2d(32, 64, 3, padding=1),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)).eval()
inputs = torch.randn(16, 3, 64, 64)


def run():
    with record_function("measured"):
        for _ in range(6):
            model(inputs)


with torch.no_grad():
    for _ in range(2):
        model(inputs)
    if len(sys.argv) > 1:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            run()
        with open(sys.argv[1], "w") as f:
            json.dump({e.key: e.self_cpu_time_total for e in prof.key_averages()}, f)
    else:
        run()
