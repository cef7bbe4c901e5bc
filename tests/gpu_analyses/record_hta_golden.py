#!/usr/bin/env python3
"""Records HTA's outputs on the shared traces as golden files for profsh's GPU analyses.

usage: record_hta_golden.py HTA_CHECKOUT TRACES_DIR OUT_DIR

HTA_CHECKOUT is a checkout of facebookresearch/HolisticTraceAnalysis (its `hta` package is
imported from there); runs with Debian's python3-pandas, python3-plotly, python3-psutil,
python3-ijson, python3-networkx and python3-pydot. Every analysis runs with HTA's defaults
(visualize=False); an analysis that raises is recorded as `<analysis>.error` holding the
exception, which the check treats as "HTA fails here".
"""
import gzip
import json
import os
import sys

hta_checkout, traces_dir, out_dir = sys.argv[1:4]
sys.path.insert(0, hta_checkout)

import logging  # noqa: E402

logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis  # noqa: E402

TRACES = [
    "amd_trace_mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
    "critical_path_cuda_event_sync_event_sync_trace.json.gz",
    "critical_path_cuda_event_sync_multi_stream_event_sync_trace.json.gz",
    "critical_path_simple_add_benchmark_result_493459_1694039959_trace.json.gz",
    "execution_trace_benchmark_simple_add_trace.json.gz",
    "nccl_parser_config_nccl_data.json.gz",
    "ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "triton_example_triton_example.json.gz",
]

# file stem -> get_gpu_user_annotation_breakdown options; dump_analyses.lua passes the same ones.
ANNOTATION_VARIANTS = {
    "annotation_breakdown_cpu": {"use_gpu_annotation": False},
    "annotation_breakdown_allowlist": {"num_kernels": 1, "allowlist_patterns": ["nccl", "forward"]},
    "annotation_breakdown_cpu_allowlist": {"use_gpu_annotation": False, "num_kernels": 2,
                                           "allowlist_patterns": ["ProfilerStep", "zero_grad"]},
}


def write(df, path):
    df.to_csv(path, index=False)


def record(trace_name):
    stem = trace_name.split(".json")[0]
    out = os.path.join(out_dir, stem)
    os.makedirs(out, exist_ok=True)
    path = os.path.join(traces_dir, trace_name)
    with gzip.open(path) as f:
        head = json.load(f)
    trace_rank = head.get("distributedInfo", {}).get("rank", 0) if isinstance(head, dict) else 0
    try:
        analyzer = TraceAnalysis(trace_files={trace_rank: path})
    except Exception as e:  # HTA cannot load the trace at all
        with open(os.path.join(out, "load.error"), "w") as f:
            f.write(f"{type(e).__name__}: {e}\n")
        return
    rank = analyzer.t.get_ranks()[0] if analyzer.t.get_ranks() else 0

    def run(name, fn):
        try:
            fn()
        except Exception as e:
            with open(os.path.join(out, name + ".error"), "w") as f:
                f.write(f"{type(e).__name__}: {e}\n")

    run("temporal_breakdown",
        lambda: write(analyzer.get_temporal_breakdown(visualize=False),
                      os.path.join(out, "temporal_breakdown.csv")))

    def kernel_breakdown():
        by_type, by_kernel = analyzer.get_gpu_kernel_breakdown(visualize=False)
        write(by_type, os.path.join(out, "kernel_type_breakdown.csv"))
        write(by_kernel, os.path.join(out, "kernel_breakdown.csv"))

    run("kernel_breakdown", kernel_breakdown)

    def idle():
        breakdown, stats = analyzer.get_idle_time_breakdown(
            ranks=[rank], visualize=False, show_idle_interval_stats=True)
        write(breakdown, os.path.join(out, "idle_time_breakdown.csv"))
        stats.reset_index().to_csv(os.path.join(out, "idle_interval_stats.csv"), index=False)

    run("idle_time_breakdown", idle)
    run("comm_comp_overlap",
        lambda: write(analyzer.get_comm_comp_overlap(visualize=False),
                      os.path.join(out, "comm_comp_overlap.csv")))

    def launch():
        stats = analyzer.get_cuda_kernel_launch_stats(ranks=[rank], visualize=False)
        write(stats[rank], os.path.join(out, "kernel_launch_stats.csv"))

    run("kernel_launch_stats", launch)

    def annotations():
        df = analyzer.get_gpu_user_annotation_breakdown(visualize=False)
        if df is None:
            raise RuntimeError("HTA returned None (no gpu_user_annotation)")
        write(df, os.path.join(out, "annotation_breakdown.csv"))

    run("annotation_breakdown", annotations)

    # The options beside the defaults: CPU ranges (user_annotation), and names kept out of
    # "others" by allowlist_patterns (a small num_kernels so that "others" appears).
    for name, options in ANNOTATION_VARIANTS.items():
        def variant(options=options):
            df = analyzer.get_gpu_user_annotation_breakdown(visualize=False, **options)
            if df is None:
                raise RuntimeError("HTA returned None (no such annotations)")
            write(df, os.path.join(out, name + ".csv"))

        run(name, variant)

    def queue_length():
        df = analyzer.get_queue_length_summary(ranks=[rank])
        if df is None:
            raise RuntimeError("HTA returned None (no launches with device work)")
        df = df.reset_index()
        df.columns = [c[-1] if isinstance(c, tuple) and c[-1] else (c[0] if isinstance(c, tuple) else c)
                      for c in df.columns]
        write(df, os.path.join(out, "queue_length_summary.csv"))

    run("queue_length_summary", queue_length)

    def aten_op_delays():
        # HTA always draws this one with plotly, which needs IPython; the drawing is skipped.
        from hta.analyzers.cuda_kernel_analysis import CudaKernelAnalysis
        CudaKernelAnalysis.visualize_aten_op_kernels_and_overhead = classmethod(lambda *a: None)
        stats = analyzer.get_aten_op_kernels_and_delay(ranks=[rank])
        write(stats[rank], os.path.join(out, "aten_op_delays.csv"))

    run("aten_op_delays", aten_op_delays)

    def temporal_with_last_step():
        with_last = TraceAnalysis(trace_files={trace_rank: path}, include_last_profiler_step=True)
        write(with_last.get_temporal_breakdown(visualize=False),
              os.path.join(out, "temporal_breakdown_last_step.csv"))

    run("temporal_breakdown_last_step", temporal_with_last_step)


for name in TRACES:
    print("recording", name, flush=True)
    record(name)
