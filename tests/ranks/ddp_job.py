#!/usr/bin/python3
"""One rank of a small data-parallel training job (gloo, CPU) under torch.profiler: the two-rank
traces in tests/ranks/data were recorded with it in the Debian 13 root (PyTorch 2.6):
  tests/torch2/in_root.sh "$(tests/torch2/debian13_root.sh)" sh tests/ranks/launch_two_ranks.sh \
      tests/ranks/ddp_job.py OUT_DIR
Rank 1 sleeps 3 ms before each step's forward pass and again before the explicit all_reduce that
ends each step, so it is the straggler in both of a step's collectives: rank 0 waits for it in the
DDP gradient all_reduce and in the explicit one. (A single late start would make only the first
certain: DDP's wait at the end of backward brings the ranks together again.) With OUT_DIR
"-" the profiler is not used (the job as `profsh run` sees it).
"""
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, schedule

STEPS = 6
LATE_RANK_SLEEP = 0.003


def main(out_dir):
    # use_libuv=0: Debian's torch is built without libuv, which the TCP store asks for by default.
    dist.init_process_group("gloo", init_method="env://?use_libuv=0")
    rank = dist.get_rank()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.parallel.DistributedDataParallel(
        nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 8)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    def step():
        x = torch.randn(32, 64)
        if rank == 1:
            time.sleep(LATE_RANK_SLEEP)
        model(x).sum().backward()
        optimizer.step()
        optimizer.zero_grad()
        if rank == 1:
            time.sleep(LATE_RANK_SLEEP)
        dist.all_reduce(torch.ones(16))

    if out_dir == "-":
        for i in range(STEPS):
            with torch.profiler.record_function("ProfilerStep#%d" % i):
                step()
    else:
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                     schedule=schedule(wait=1, warmup=1, active=STEPS - 2, repeat=1),
                     on_trace_ready=lambda p: p.export_chrome_trace(
                         os.path.join(out_dir, "rank-%d.json" % rank))) as prof:
            for _ in range(STEPS):
                step()
                prof.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
