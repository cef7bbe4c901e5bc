#!/usr/bin/env python3
"""Times Python's json.load of a trace file: the baseline profsh's import is compared with.
Prints the seconds and MB/s of one load (the second of two when RUNS=2)."""
import json
import os
import sys
import time

path = sys.argv[1]
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 1
size = os.path.getsize(path)
best = None
for _ in range(runs):
    start = time.perf_counter()
    with open(path, "rb") as f:
        doc = json.load(f)
    elapsed = time.perf_counter() - start
    events = len(doc["traceEvents"]) if isinstance(doc, dict) else len(doc)
    del doc
    best = elapsed if best is None else min(best, elapsed)
print("python json.load: %.3f s = %.0f MB/s (%d events)" % (best, size / 1e6 / best, events))
