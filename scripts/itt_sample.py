# The seed ITT sample (PyTorch's "Profiling PyTorch workloads with Intel VTune" recipe): Conv2d
# and Linear, three inference iterations, each marked iteration_N with the ITT API.
#   python3 itt_sample.py       run it under profsh: profsh scripts/itt_sample.lua
#
# torch.profiler.itt needs a torch built with ITT. Where it is missing (Debian's torch), the
# ranges go through ITT all the same with libitt_ranges.so from profsh's build ($ITT_RANGES_LIB),
# which makes the calls torch's ITT wrapper makes; and torch's operators then come from profsh's
# operator source instead of emit_itt.
import contextlib
import ctypes
import os

import torch
import torch.nn as nn


class ITTSample(nn.Module):
    def __init__(self):
        super(ITTSample, self).__init__()
        self.conv = nn.Conv2d(3, 5, 3)
        self.linear = nn.Linear(292820, 1000)

    def forward(self, x):
        x = self.conv(x)
        x = x.view(x.shape[0], -1)
        x = self.linear(x)
        return x


def itt_range_function():
    if torch.profiler.itt.is_available():
        return torch.profiler.itt.range
    lib = ctypes.CDLL(os.environ["ITT_RANGES_LIB"])  # KeyError names what is missing

    @contextlib.contextmanager
    def itt_range(name):
        lib.itt_range_push(name.encode())
        try:
            yield
        finally:
            lib.itt_range_pop()

    return itt_range


def emit_itt():
    if torch.profiler.itt.is_available():
        return torch.autograd.profiler.emit_itt()
    return contextlib.nullcontext()


def main():
    itt_range = itt_range_function()
    m = ITTSample()
    x = torch.rand(10, 3, 244, 244)
    with emit_itt():
        for i in range(3):
            with itt_range(f'iteration_{i}'):
                m(x)


if __name__ == '__main__':
    main()
