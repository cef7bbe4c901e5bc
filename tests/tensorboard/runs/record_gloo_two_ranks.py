import os, sys, torch, torch.nn as nn, torch.distributed as dist
import torch.multiprocessing as mp
from torch.profiler import profile, ProfilerActivity, schedule, tensorboard_trace_handler

def worker(rank, out):
    os.environ["USE_LIBUV"] = "0"
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29533?use_libuv=0", rank=rank, world_size=2)
    torch.manual_seed(rank)
    model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 8)))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(128, 64)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True,
                 schedule=schedule(wait=0, warmup=1, active=3),
                 on_trace_ready=tensorboard_trace_handler(out, worker_name=f"worker{rank}")) as p:
        for _ in range(4):
            y = model(x).sum(); y.backward(); opt.step(); opt.zero_grad()
            dist.all_reduce(torch.ones(1000))
            p.step()
    dist.destroy_process_group()

if __name__ == "__main__":
    mp.spawn(worker, args=(sys.argv[1],), nprocs=2)
