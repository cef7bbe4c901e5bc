#!/usr/bin/env python3
"""A small convnet's training loop, the workload of tests/gpu/device_check.sh and of
tests/gpu/check_cpu_pair.py: run bare, under torch.profiler, or under `profsh run`, on the same
steps, so that their traces and step times can be compared (compare_runs.py).

Each step is a record_function range named ProfilerStep#N (N from 0, warm-up steps included),
which is profsh's default step marker; the measured steps are inside one range named
device_check_loop. The data, the weights and cuDNN's choices are fixed, so every run of a given
torch launches the same operators and kernels step for step.

Modes:
  none     no profiler: step times only
  kineto   torch.profiler (CPU, and CUDA on a GPU, record_shapes) over device_check_loop,
           its Chrome trace written to --trace
  profsh   nothing started here: run it under `profsh run` (or --on-demand, see --until-file)

Usage: train_loop.py --mode MODE [--device cuda|cpu] [--steps 30] [--warmup 5] [--trace PATH]
                     [--timings PATH] [--pid-file PATH --until-file PATH --max-seconds S]
With --until-file the loop runs steps (ProfilerStep#N, no device_check_loop range) until that
file exists or --max-seconds pass, after writing its pid to --pid-file: the workload of an
on-demand `profsh trace --pid`.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn as nn

LOOP_RANGE = "device_check_loop"


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["none", "kineto", "profsh"], required=True)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--trace")
    p.add_argument("--timings")
    p.add_argument("--pid-file")
    p.add_argument("--until-file")
    p.add_argument("--max-seconds", type=float, default=60.0)
    a = p.parse_args()
    if a.mode == "kineto" and not a.trace:
        p.error("--mode kineto needs --trace")
    if bool(a.pid_file) != bool(a.until_file):
        p.error("--pid-file and --until-file go together")
    return a


def model():
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1, stride=2), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))


class Loop:
    def __init__(self, device, batch):
        torch.manual_seed(0)
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.deterministic = True
        self.device = device
        self.net = model().to(device)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.01, momentum=0.9)
        self.x = torch.randn(batch, 3, 32, 32).to(device)
        self.y = (torch.arange(batch) % 10).to(device)
        self.index = 0

    def step(self):
        """One training step in its ProfilerStep range; returns its wall time in seconds, the
        GPU's work included."""
        start = time.perf_counter()
        with torch.autograd.profiler.record_function("ProfilerStep#%d" % self.index):
            self.opt.zero_grad()
            loss = nn.functional.cross_entropy(self.net(self.x), self.y)
            loss.backward()
            self.opt.step()
            if self.device == "cuda":
                torch.cuda.synchronize()
        self.index += 1
        return time.perf_counter() - start


def measured_steps(loop, steps):
    with torch.autograd.profiler.record_function(LOOP_RANGE):
        return [loop.step() for _ in range(steps)]


def run_until(loop, a):
    with open(a.pid_file + ".tmp", "w") as f:
        f.write("%d\n" % os.getpid())
    os.replace(a.pid_file + ".tmp", a.pid_file)
    deadline = time.monotonic() + a.max_seconds
    while not os.path.exists(a.until_file):
        if time.monotonic() > deadline:
            print("train_loop: %s did not appear within %.0f s" % (a.until_file, a.max_seconds),
                  file=sys.stderr)
            return 1
        loop.step()
        time.sleep(0.005)  # leaves the profsh trace request room between steps
    return 0


def main():
    a = parse_args()
    if a.device == "cuda" and not torch.cuda.is_available():
        print("train_loop: torch %s sees no CUDA device" % torch.__version__, file=sys.stderr)
        return 3
    loop = Loop(a.device, a.batch)
    for _ in range(a.warmup):
        loop.step()
    if a.until_file:
        return run_until(loop, a)
    if a.mode == "kineto":
        from torch.profiler import ProfilerActivity, profile
        activities = [ProfilerActivity.CPU]
        if a.device == "cuda":
            activities.append(ProfilerActivity.CUDA)
        with profile(activities=activities, record_shapes=True) as prof:
            times = measured_steps(loop, a.steps)
        prof.export_chrome_trace(a.trace)
    else:
        times = measured_steps(loop, a.steps)
    if a.timings:
        with open(a.timings, "w") as f:
            json.dump({"mode": a.mode, "device": a.device, "torch": torch.__version__,
                       "torch_cuda": torch.version.cuda, "step_seconds": times}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
