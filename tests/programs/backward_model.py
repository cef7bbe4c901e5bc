"""A model with a clear backward pass, for the Python-stack flamegraph: a few linear layers whose
backward (two matrix products per layer) costs about twice the forward, trained for a few steps
with an optimizer. Run under `profsh run --activities torch --with-stack -- python3 THIS [STEPS]`.
"""
import sys

import torch

torch.manual_seed(0)
torch.set_num_threads(1)


class Model(torch.nn.Module):
    def __init__(self, width=256, layers=4):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(width, width) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


def train(steps):
    model = Model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    data, target = torch.randn(128, 256), torch.randn(128, 256)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(data), target)
        loss.backward()
        optimizer.step()
    return loss.item()


if __name__ == "__main__":
    print("loss %.4f" % train(int(sys.argv[1]) if len(sys.argv) > 1 else 20))
