"""A training loop as people write it, with no profiler call: a DataLoader of synthetic batches,
a small model, SGD. torch records a range for each batch the DataLoader hands out
("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__") and for each optimizer step
("Optimizer.step#SGD.step"): the steps `profsh run --step-marker dataloader|optimizer` finds.

Usage: train_loop.py STEPS   (prints one line: "trained STEPS steps")
Runs on torch 1.13 (Debian 12) and 2.6 (the Debian 13 root).
"""
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    steps = int(sys.argv[1])
    torch.manual_seed(0)
    inputs = torch.randn(steps * 4, 8)
    targets = torch.randn(steps * 4, 1)
    loader = DataLoader(TensorDataset(inputs, targets), batch_size=4)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    done = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        done += 1
    print("trained %d steps" % done, flush=True)


if __name__ == "__main__":
    main()
