"""A Python workload for the cpu activity's Python frames (check_python_samples.py): step()
calls into torch (matrix products: native frames above it), busy() burns CPU in pure Python.
Each function's own CPU time is measured here and printed, the split the samples must show.
Then the profile function is replaced (sys.setprofile(None), as cProfile or torch.profiler would)
and after() calls torch for a while: its samples must not keep the Python frames open then."""
import sys
import time

import torch


def busy(n):
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


def step(a, b):
    c = a
    for _ in range(4):
        c = torch.mm(a, b)
    return c


def after(a, b, seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        torch.mm(a, b)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    torch.set_num_threads(1)  # the products on this thread, under step()
    a = torch.randn(192, 192)
    b = torch.randn(192, 192)
    spent = {"step": 0.0, "busy": 0.0}
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        t0 = time.thread_time()
        step(a, b)
        t1 = time.thread_time()
        busy(50000)
        t2 = time.thread_time()
        spent["step"] += t1 - t0
        spent["busy"] += t2 - t1
    total = spent["step"] + spent["busy"]
    print("SPLIT step %.4f busy %.4f" % (spent["step"] / total, spent["busy"] / total))
    sys.setprofile(None)
    after(a, b, seconds / 3)


main()
