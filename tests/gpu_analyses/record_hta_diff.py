#!/usr/bin/env python3
"""Records HTA's TraceDiff outputs on pairs of the shared traces as golden files for `profsh.diff`.

usage: record_hta_diff.py HTA_CHECKOUT TRACES_DIR OUT_DIR

HTA_CHECKOUT is a checkout of facebookresearch/HolisticTraceAnalysis (its `hta` package is
imported from there); runs with Debian's python3-pandas, python3-plotly, python3-psutil,
python3-ijson, python3-networkx and python3-pydot. Each case writes `CASE.csv` (compare_traces,
labels "control" and "test", the name as first column) and `CASE.groups.json` (ops_diff), or
`CASE.error` holding the exception where HTA raises; `cases.json` lists each case's traces and
options (a step of None is HTA's default, the first ProfilerStep). Cases whose name ends in `_whole` compare
the whole traces: HTA's extract_ops with its ProfilerStep filter left out (HTA itself refuses a
trace without a ProfilerStep), everything else HTA's own code. Cases ending in `_short` pass
use_short_name=True to compare_traces (ops_diff has no such option: no groups file).
"""
import gzip
import json
import os
import sys

hta_checkout, traces_dir, out_dir = sys.argv[1:4]
sys.path.insert(0, hta_checkout)

import logging  # noqa: E402

logging.disable(logging.WARNING)
from hta.common.trace import Trace  # noqa: E402
from hta.trace_diff import DeviceType, LabeledTrace, TraceDiff  # noqa: E402

NS = "ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
NCCL = "nccl_parser_config_nccl_data.json.gz"
SYNC = "critical_path_cuda_event_sync_event_sync_trace.json.gz"
MULTI = "critical_path_cuda_event_sync_multi_stream_event_sync_trace.json.gz"
ADD = "critical_path_simple_add_benchmark_result_493459_1694039959_trace.json.gz"
AMD = "amd_trace_mi250_minitoy_train_ROCm6_2_kineto.json.gz"
TRITON = "triton_example_triton_example.json.gz"
CPU = "cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"

# name: (control, test, device, control_step, test_step)
CASES = {
    "ns_self_all": (NS, NS, "all", None, None),
    "ns_steps_101_103_all": (NS, NS, "all", 101, 103),
    "ns_vs_nccl_all": (NS, NCCL, "all", None, None),
    "ns_vs_nccl_cpu": (NS, NCCL, "cpu", None, None),
    "ns_vs_nccl_gpu": (NS, NCCL, "gpu", None, None),
    "nccl_steps_5_4_gpu": (NCCL, NCCL, "gpu", 5, 4),
    "amd_steps_1_2_all": (AMD, AMD, "all", 1, 2),
    "sync_vs_multi_all": (SYNC, MULTI, "all", None, None),
    "sync_vs_multi_whole": (SYNC, MULTI, "all", "whole", "whole"),
    "sync_vs_add_gpu_whole": (SYNC, ADD, "gpu", "whole", "whole"),
    "triton_vs_cpu_only_all": (TRITON, CPU, "all", None, None),
    "ns_vs_nccl_gpu_short": (NS, NCCL, "gpu", None, None),
}

DEVICES = {"all": DeviceType.ALL, "cpu": DeviceType.CPU, "gpu": DeviceType.GPU}


def rank_of(path):
    with gzip.open(path) as f:
        head = json.load(f)
    return head.get("distributedInfo", {}).get("rank", 0) if isinstance(head, dict) else 0


def labeled(name, label):
    path = os.path.join(traces_dir, name)
    return LabeledTrace(label=label, t=Trace(trace_files={rank_of(path): path}))


def whole_trace_ops(self, rank=None, iteration=None, device_type=DeviceType.ALL):
    df = self.t.get_trace(self.ranks()[0])
    if device_type == DeviceType.CPU:
        return df[df["stream"].eq(-1)]
    if device_type == DeviceType.GPU:
        return df[df["stream"].ne(-1)]
    return df


original_extract_ops = LabeledTrace.extract_ops
os.makedirs(out_dir, exist_ok=True)
with open(os.path.join(out_dir, "cases.json"), "w") as f:
    json.dump({case: {"control": c, "test": t, "device": d, "control_step": cs, "test_step": ts,
                      "by": "short_name" if case.endswith("_short") else "name"}
               for case, (c, t, d, cs, ts) in CASES.items()}, f, indent=1)
for case, (control, test, device, control_step, test_step) in CASES.items():
    print("recording", case, flush=True)
    whole = control_step == "whole"
    LabeledTrace.extract_ops = whole_trace_ops if whole else original_extract_ops
    steps = (None, None) if whole else (control_step, test_step)
    try:
        c, t = labeled(control, "control"), labeled(test, "test")
        args = dict(control_iteration=steps[0], test_iteration=steps[1],
                    device_type=DEVICES[device])
        short = case.endswith("_short")
        df = TraceDiff.compare_traces(c, t, use_short_name=short, **args)
        df.index.name = "short_name" if short else "name"
        df.reset_index().to_csv(os.path.join(out_dir, case + ".csv"), index=False)
        if short:
            continue
        groups = TraceDiff.ops_diff(c, t, **args)
        with open(os.path.join(out_dir, case + ".groups.json"), "w") as f:
            json.dump(groups, f, indent=1, sort_keys=True)
    except Exception as e:
        with open(os.path.join(out_dir, case + ".error"), "w") as f:
            f.write(f"{type(e).__name__}: {e}\n")
