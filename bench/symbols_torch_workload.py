# A small CPU workload in libtorch for the symbolisation benchmark (bench/symbols_bench.sh):
# matrix products, convolutions and elementwise work for about SECONDS seconds.
import sys
import time

import torch

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
torch.set_num_threads(1)
a, b = torch.randn(256, 256), torch.randn(256, 256)
conv = torch.nn.Conv2d(16, 32, 3)
x = torch.randn(4, 16, 32, 32)
end = time.time() + seconds
while time.time() < end:
    c = a @ b
    y = torch.relu(conv(x)).sum()
    z = torch.sigmoid(c).mean() + torch.tanh(c).std()
