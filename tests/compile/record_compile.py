#!/usr/bin/python3
"""Records the torch.compile test trace with PyTorch 2.6 (run it in the Debian 13 root:
tests/torch2/in_root.sh "$(tests/torch2/debian13_root.sh)" /usr/bin/python3 THIS OUT.json).

A small model compiled with Inductor on the CPU, trained for six profiled steps:
  - a data-dependent branch in forward(): a graph break, so frame 0's region holds frame 1's
    (the resumption) nested inside it, and an eager island (Tensor.__bool__) between them;
  - a new batch size at step 3: both frames recompile (regions 0/1 and 1/1);
  - backward() through CompiledFunctionBackward, linked to the forward by sequence numbers;
  - the first call inside the profile, so the compile work ("(dynamo_timed)" events) is there;
  - Inductor's C++ kernels recorded as operators (cpp.enable_kernel_profile).
with_stack is off: torch 2.6 (Debian's build) crashes in its Python tracer when a compiled
frame runs under with_stack=True. Inductor's caches go to a fresh folder, so that the compile
work recorded is a first compile, not a cache hit.
"""
import os
import sys
import tempfile

os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="profsh-inductor-")

import torch
import torch._inductor.config as inductor_config
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, schedule

inductor_config.cpp.enable_kernel_profile = True
torch.manual_seed(0)
torch.set_num_threads(1)


class BranchyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(32, 64)
        self.b = nn.Linear(64, 16)

    def forward(self, x):
        y = torch.relu(self.a(x))
        if y.sum() > 0:  # a tensor's truth value: Dynamo breaks the graph here
            y = y * 2
        return self.b(y).sum()


def main(out_path):
    model = BranchyModel()
    compiled = torch.compile(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    def step(batch):
        loss = compiled(torch.randn(batch, 32))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                 schedule=schedule(wait=0, warmup=0, active=6, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(out_path)) as prof:
        for i in range(6):
            step(8 if i < 3 else 24)
            prof.step()


if __name__ == "__main__":
    main(sys.argv[1])
