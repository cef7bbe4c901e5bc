"""The cost per Python call of the cpu activity's Python frames (engine/torch_plugin/python_calls):
run under `profsh run --activities nvtx,torch` with and without PROFSH_PYTHON_CALLS=1 (what the
cpu activity sets; without cpu no sampling adds its own cost), it times N calls of an empty
function by this thread's CPU time, best of 5, and prints ns per call.
Usage: python3 python_calls_bench.py [N]"""
import sys
import time

import torch  # noqa: F401  (loads profsh's torch plugin)


def empty():
    pass


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000000
    best = None
    for _ in range(5):
        t0 = time.thread_time_ns()
        for _ in range(n):
            empty()
        t = time.thread_time_ns() - t0
        best = t if best is None else min(best, t)
    print("ns per call %.1f" % (best / n))


main()
