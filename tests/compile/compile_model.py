#!/usr/bin/python3
"""A torch.compile training loop for profsh's live recording (tests/compile/check_compile_live.py).

A small model compiled with Inductor on the CPU (the Debian 13 root has g++, so Inductor's C++
backend builds its kernels there), trained for six steps, with no profiler call of its own: profsh
records it from outside (`profsh run --activities torch`), as a user's unmodified script:
  - a data-dependent branch in forward(): a graph break, so frame 0's region holds frame 1's
    (the resumption) nested inside it, with Tensor.__bool__ between them;
  - a new batch size at step 3: both frames recompile (regions 0/1 and 1/1);
  - backward() through CompiledFunctionBackward, whose forward is CompiledFunction;
  - nested "(dynamo_timed)" compile spans (compile_inner holds call_user_compiler holds
    compile_fx_inner ...), the case where summing them counted time several times.
Inductor's caches go to a fresh folder (removed at exit), so that the compile work recorded is a
first compile.

Usage: compile_model.py [torch.profiler OUT.json]   (with an argument: the same loop under
torch.profiler, for comparing what each records)
"""
import atexit
import os
import shutil
import sys
import tempfile

os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="profsh-inductor-")
atexit.register(shutil.rmtree, os.environ["TORCHINDUCTOR_CACHE_DIR"], True)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

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


def train(steps=6):
    model = BranchyModel()
    compiled = torch.compile(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for i in range(steps):
        loss = compiled(torch.randn(8 if i < 3 else 24, 32))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return loss.item()


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "torch.profiler":
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            train()
        prof.export_chrome_trace(sys.argv[2])
    else:
        print("loss %.4f" % train())


if __name__ == "__main__":
    main()
