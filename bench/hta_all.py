#!/usr/bin/env python3
"""Loads a trace with HTA and runs the analyses bench/gpu_analyses_all.lua runs in profsh.

usage: hta_all.py HTA_CHECKOUT TRACE

Prints each stage as it is reached ("stage: loading", "stage: temporal", ...), so that a run
stopped at a time or memory cap says how far it got.
"""
import logging
import sys

sys.path.insert(0, sys.argv[1])
logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis  # noqa: E402


def stage(name):
    print("stage:", name, flush=True)


stage("loading")
analyzer = TraceAnalysis(trace_files={0: sys.argv[2]})
results = {}
for name, call in [
    ("temporal", lambda: analyzer.get_temporal_breakdown(visualize=False)),
    ("kernels", lambda: analyzer.get_gpu_kernel_breakdown(visualize=False)),
    ("idle", lambda: analyzer.get_idle_time_breakdown(visualize=False, show_idle_interval_stats=True)),
    ("overlap", lambda: analyzer.get_comm_comp_overlap(visualize=False)),
    ("launches", lambda: analyzer.get_cuda_kernel_launch_stats(visualize=False)),
    ("annotations", lambda: analyzer.get_gpu_user_annotation_breakdown(visualize=False)),
]:
    stage(name)
    try:
        results[name] = call()
    except Exception as e:  # HTA fails on some traces; the time until then still counts
        results[name] = f"{type(e).__name__}: {e}"
stage("done")
print("hta:", ", ".join(f"{k}={'error' if isinstance(v, str) else 'ok'}" for k, v in results.items()))
