"""A Python workload for the cpu activity's Python frames (check_python_samples.py): step()
calls into torch (matrix products: native frames above it), busy() burns CPU in pure Python.
Each function's own CPU time is measured here and printed, the split the samples must show.
Two more Python threads do the same in thread_step() and thread_busy(): one started before
torch's import (so running when profsh's profile function is installed), one a thread pool's,
started after it. Then the main thread's profile function is replaced (sys.setprofile(None), as
cProfile or torch.profiler would) and after() calls torch for a while: its samples must not keep
the Python frames open then."""
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor


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


def thread_busy(n):
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


def thread_step(a, b):
    c = a
    for _ in range(4):
        c = torch.mm(a, b)
    return c


def thread_work(label, go, seconds, results):
    go.wait()
    a = torch.randn(192, 192)
    b = torch.randn(192, 192)
    spent = {"thread_step": 0.0, "thread_busy": 0.0}
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        t0 = time.thread_time()
        thread_step(a, b)
        t1 = time.thread_time()
        thread_busy(80000)
        t2 = time.thread_time()
        spent["thread_step"] += t1 - t0
        spent["thread_busy"] += t2 - t1
    total = spent["thread_step"] + spent["thread_busy"]
    results[label] = "TSPLIT %s %d thread_step %.4f thread_busy %.4f" % (
        label, threading.get_native_id(), spent["thread_step"] / total,
        spent["thread_busy"] / total)


def main():
    torch.set_num_threads(1)  # the products on the thread that asks for them
    a = torch.randn(192, 192)
    b = torch.randn(192, 192)
    spent = {"step": 0.0, "busy": 0.0}
    with ThreadPoolExecutor(max_workers=1) as pool:
        late = pool.submit(thread_work, "late", GO, THREAD_SECONDS, RESULTS)
        GO.set()
        end = time.thread_time() + SECONDS
        while time.thread_time() < end:
            t0 = time.thread_time()
            step(a, b)
            t1 = time.thread_time()
            busy(50000)
            t2 = time.thread_time()
            spent["step"] += t1 - t0
            spent["busy"] += t2 - t1
        late.result()
    EARLY.join()
    total = spent["step"] + spent["busy"]
    print("SPLIT step %.4f busy %.4f" % (spent["step"] / total, spent["busy"] / total))
    for label in ("early", "late"):
        print(RESULTS[label])
    sys.setprofile(None)
    after(a, b, SECONDS / 3)


SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
THREAD_SECONDS = SECONDS / 2
GO = threading.Event()
RESULTS = {}
# Running (waiting for GO) when torch's import below installs profsh's profile function.
EARLY = threading.Thread(target=thread_work, args=("early", GO, THREAD_SECONDS, RESULTS))
EARLY.start()

import torch  # noqa: E402

main()
