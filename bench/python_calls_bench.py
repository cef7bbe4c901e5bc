"""The cost per Python call of the cpu activity's Python frames (engine/torch_plugin/python_calls):
run under `profsh run --activities nvtx,torch` with and without PROFSH_PYTHON_CALLS=1 (what the
cpu activity sets; without cpu no sampling adds its own cost), it times N calls of an empty
function by the calling thread's CPU time, best of 5, and prints ns per call. With --thread the
calls run in a threading.Thread started after torch's import (a thread that records its calls
from its first event on) rather than in the thread that imported torch.
Usage: python3 python_calls_bench.py [N] [--thread]"""
import sys
import threading
import time

import torch  # noqa: F401  (loads profsh's torch plugin)


def empty():
    pass


def measure(n):
    best = None
    for _ in range(5):
        t0 = time.thread_time_ns()
        for _ in range(n):
            empty()
        t = time.thread_time_ns() - t0
        best = t if best is None else min(best, t)
    print("ns per call %.1f" % (best / n))


def main():
    args = [a for a in sys.argv[1:] if a != "--thread"]
    n = int(args[0]) if args else 2000000
    if "--thread" in sys.argv[1:]:
        worker = threading.Thread(target=measure, args=(n,))
        worker.start()
        worker.join()
    else:
        measure(n)


main()
