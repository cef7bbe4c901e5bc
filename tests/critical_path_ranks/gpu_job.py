#!/usr/bin/env python3
"""Records tests/critical_path_ranks/gloo_h200: two ranks on one GPU, gloo all-reduces of a CPU
tensor after GPU matmuls, rank 1 sleeping 5 ms before each all-reduce; torch.profiler with CUDA
activity and CUDA sync events, steps 2-4; each rank writes OUT/rank-N.json.

Recorded with torch 2.11.0+cu130 on an NVIDIA H200 (GLOO_SOCKET_IFNAME=lo). gloo runs its
collective on its own threads (gloo:all_reduce ranges), which HTA's graph leaves out: the
job's critical path adds them, joined to the c10d::allreduce_ that issued them, and links the
ranks there (docs/ANALYSIS.md, "Critical path across ranks").

  GLOO_SOCKET_IFNAME=lo python3 gpu_job.py OUT
"""
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def work(rank, out):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29533"
    dist.init_process_group("gloo", rank=rank, world_size=2)
    x = torch.randn(2048, 2048, device="cuda")
    config = torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True)
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities,
                                schedule=torch.profiler.schedule(wait=1, warmup=1, active=3),
                                experimental_config=config) as p:
        for _ in range(5):
            y = (x @ x).relu() @ x
            if rank == 1:
                time.sleep(0.005)
            t = y.sum(dim=0).cpu()
            dist.all_reduce(t)
            torch.cuda.synchronize()
            p.step()
    p.export_chrome_trace(os.path.join(out, "rank-%d.json" % rank))
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(work, args=(sys.argv[1],), nprocs=2)
