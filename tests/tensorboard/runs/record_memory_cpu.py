import torch, torch.nn as nn, sys, os
from torch.profiler import profile, ProfilerActivity, schedule, tensorboard_trace_handler
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Sequential(nn.Linear(128, 32), nn.ReLU()), nn.Linear(32, 8))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(256, 64)
out = sys.argv[1]
with profile(activities=[ProfilerActivity.CPU], profile_memory=True, with_stack=False, record_shapes=True,
             schedule=schedule(wait=0, warmup=1, active=3), on_trace_ready=tensorboard_trace_handler(out, worker_name="worker0")) as p:
    for _ in range(4):
        y = model(x).sum(); y.backward(); opt.step(); opt.zero_grad(); p.step()
