#!/usr/bin/python3
"""Records torch 2.6's tables of traces it cannot record on this machine: a real GPU run and a
run with Python stacks.

Run it inside the Debian 13 root (tests/torch2/in_root.sh). There is no GPU here, and Debian's
torch 2.6 on Python 3.13 crashes with with_stack=True (record_torch26.py says so), so these
cases start from traces recorded elsewhere and hand their events to torch 2.6's own code.

What this script builds (the only part that is not torch's):
  * KinetoEvent stand-ins, one per trace event that torch's ProfilerResult.events() holds, with
    the accessors torch reads, filled from the trace's JSON:
      - "X" events of categories cpu_op, user_annotation, cuda_runtime, cuda_driver: CPU events;
        correlation_id() is the "External id" of operators and annotations (their
        linked_correlation_id() is 0), the CUPTI "correlation" of runtime calls, whose
        linked_correlation_id() is their "External id";
      - kernel, gpu_memcpy, gpu_memset, gpu_user_annotation: CUDA events; correlation_id()
        "correlation", linked_correlation_id() "External id" (Kineto writes a GPU activity's
        "External id" from the activity it is linked to), device_index() "device";
        gpu_user_annotation ones are user annotations (is_user_annotation());
      - "[memory]" instants: memory records ("Bytes", "Device Type").
      start_ns()/end_ns() are the trace's times in nanoseconds since the trace's start (the
      "Trace" span, else the first event), so no epoch rounding enters (record_torch26.py's
      cases cover that); shapes() is "Input Dims", stack() "Call stack" split at ';', flops()
      "flops", sequence_nr() "Sequence number", fwd_thread_id() "Fwd thread id".
    Operators' scope() is 0 except for the autograd nodes that a same-thread
    "autograd::engine::evaluate_function: X" range wraps (RecordScope::BACKWARD_FUNCTION, 1):
    traces do not record scopes, and torch needs them to give backward ops their forward stacks.
    The events keep the trace's order (ProfilerResult's own order is not in a trace).
  * the set of cases and table options, as record_torch26.py.
What is torch's own: everything from there on. torch.autograd.profiler.profile._parse_kineto_results
(called on the stand-ins: memory records matched to ops, kernels attached through their linked
correlation, runtime calls moved to their op's thread, the [start, -end] sort), EventList and its
_build_tree (nesting, merging of same-name children, backward stacks), key_averages() and
table().

Traces (from ../shared/traces, and one of the 1.13 cases):
  * amd_trace_mi250_minitoy_train_ROCm6_2_kineto: a torch 2.x training run on an AMD MI250
    (ROCm torch names its device "cuda"): 70 operators, 21 runtime calls, 14 kernels, 2 copies,
    2 gpu_user_annotation spans; a 2.x trace, so profsh finds its format by itself;
  * triton_example_triton_example: torch 2.x, a Triton kernel launched through cuda_driver;
  * nccl_parser_config_nccl_data: torch 2.x, a two-rank DDP training step on A100s: every NCCL
    kernel belongs to record_param_comms, and a gpu_user_annotation span (nccl:all_reduce)
    covers it on the device, linked to the CPU nccl:all_reduce range under record_param_comms
    (issue 27: torch counts that device time twice in record_param_comms' total);
  * tests/golden/cases/mlp_training_stack_flops: torch 1.13 with stacks, FLOPs and memory, to
    show 2.6's stack printing (every grouped frame) and FLOPs column; profsh is told
    torch_format="2" for it, since the trace is 1.13's.
Not used: the shared traces whose kernels name their runtime call's correlation as "External id"
(older Kineto: execution_trace_benchmark_simple_add, critical_path_simple_add, event_sync), from
which the op a kernel belongs to (what 2.6 held in memory) is not in the trace's link, and the
ones holding cuda_sync events, whose place in 2.6's ProfilerResult (a CUDA event attached like a
kernel, or none) cannot be checked without a GPU.

Usage: record_torch26_events.py OUT_DIR [case ...]   (no case: all of them)
"""
import gzip
import json
import os
import sys
from decimal import ROUND_HALF_EVEN, Decimal

import torch
from torch.autograd import DeviceType
from torch.autograd.profiler import profile as autograd_profile
from torch.autograd.profiler_util import EventList

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from record_torch26 import MEMORY_SORT_KEYS, SORT_KEYS, record_tables  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# The shared traces beside the checkout; PROFSH_SHARED_TRACES names them from a worktree elsewhere.
SHARED = os.environ.get("PROFSH_SHARED_TRACES",
                        os.path.join(HERE, "..", "..", "..", "shared", "traces"))
CPU_CATEGORIES = {"cpu_op", "user_annotation", "cuda_runtime", "cuda_driver"}
DEVICE_CATEGORIES = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation"}
BACKWARD_WRAPPER = "autograd::engine::evaluate_function: "


class EventStandIn:
    """The accessors of torch._C._autograd._KinetoEvent that _parse_kineto_results reads."""

    def __init__(self, name, start_ns, end_ns, tid, device_type, correlation=0, linked=0,
                 args=None, scope=0, device_index=0, nbytes=0, user_annotation=False):
        args = args or {}
        self._name, self._start, self._end, self._tid = name, start_ns, end_ns, tid
        self._device_type, self._correlation, self._linked = device_type, correlation, linked
        self._args, self._scope, self._device_index = args, scope, device_index
        self._nbytes, self._user_annotation = nbytes, user_annotation

    def name(self): return self._name
    def start_ns(self): return self._start
    def end_ns(self): return self._end
    def start_thread_id(self): return self._tid
    def end_thread_id(self): return self._tid
    def device_type(self): return self._device_type
    def device_index(self): return self._device_index
    def device_resource_id(self): return self._tid
    def correlation_id(self): return self._correlation
    def linked_correlation_id(self): return self._linked
    def is_async(self): return False
    def is_user_annotation(self): return self._user_annotation
    def scope(self): return self._scope
    def nbytes(self): return self._nbytes
    def fwd_thread_id(self): return self._args.get("Fwd thread id", 0)
    def sequence_nr(self): return self._args.get("Sequence number", -1)
    def shapes(self): return self._args.get("Input Dims", [])
    def concrete_inputs(self): return []
    def kwinputs(self): return {}
    def flops(self): return self._args.get("flops", 0)
    def cuda_elapsed_us(self): return -1
    def privateuse1_elapsed_us(self): return -1

    def stack(self):
        text = self._args.get("Call stack")
        return text.split(";") if text else []


class ResultStandIn:
    def __init__(self, events):
        self._events = events

    def events(self): return self._events
    def trace_start_ns(self): return 0


class ParserSelf:
    """What _parse_kineto_results reads of the profile object."""

    def __init__(self, use_device):
        self.use_device = use_device


def us_to_ns(value):
    # Kineto writes microseconds with at most three decimals; keep them exact. float(ts) * 1000
    # is not: near 4.4e12 us (the NCCL trace) a double's step is 0.5 ns, and the product lands a
    # nanosecond off. repr() gives back the digits the trace wrote.
    return int((Decimal(repr(value)) * 1000).to_integral_value(rounding=ROUND_HALF_EVEN))


def stand_ins(trace):
    events = trace["traceEvents"]
    spans = [e for e in events if e.get("ph") == "X" and e.get("cat") == "Trace"]
    complete = [e for e in events if e.get("ph") == "X"]
    start = min(us_to_ns(e["ts"]) for e in (spans or complete))
    out = []
    latest_wrapper_end = {}  # (tid, node name) -> end of its latest evaluate_function range
    ordered = sorted(range(len(events)), key=lambda i: (us_to_ns(events[i].get("ts", 0)),
                                                          -us_to_ns(events[i].get("dur", 0))))
    backward = set()
    for i in ordered:
        e = events[i]
        if e.get("ph") != "X" or e.get("cat") != "cpu_op":
            continue
        ts, end = us_to_ns(e["ts"]), us_to_ns(e["ts"]) + us_to_ns(e["dur"])
        if e["name"].startswith(BACKWARD_WRAPPER):
            latest_wrapper_end[(e["tid"], e["name"][len(BACKWARD_WRAPPER):])] = end
        elif ts <= latest_wrapper_end.get((e["tid"], e["name"]), -1):
            backward.add(i)
    for i, e in enumerate(events):
        cat, ph, args = e.get("cat"), e.get("ph"), e.get("args", {})
        if ph == "i" and e.get("name") == "[memory]":
            t = us_to_ns(e["ts"]) - start
            out.append(EventStandIn("[memory]", t, t, e["tid"], DeviceType(args.get("Device Type", 0)),
                                    nbytes=args["Bytes"], args=args))
            continue
        if ph != "X" or (cat not in CPU_CATEGORIES and cat not in DEVICE_CATEGORIES):
            continue
        t = us_to_ns(e["ts"]) - start
        end = t + us_to_ns(e["dur"])
        if cat in DEVICE_CATEGORIES:
            out.append(EventStandIn(e["name"], t, end, e["tid"], DeviceType.CUDA,
                                    correlation=args.get("correlation", 0),
                                    linked=args.get("External id", 0), args=args,
                                    device_index=args.get("device", 0),
                                    user_annotation=cat == "gpu_user_annotation"))
        elif cat in ("cuda_runtime", "cuda_driver"):
            out.append(EventStandIn(e["name"], t, end, e["tid"], DeviceType.CPU,
                                    correlation=args.get("correlation", 0),
                                    linked=args.get("External id", 0), args=args))
        else:
            out.append(EventStandIn(e["name"], t, end, e["tid"], DeviceType.CPU,
                                    correlation=args.get("External id", 0), args=args,
                                    scope=1 if i in backward else (7 if cat == "user_annotation" else 0),
                                    user_annotation=cat == "user_annotation"))
    return out


def record(out_dir, name, trace_path, use_device, profile_memory, with_flops, groupings,
           sort_keys, table_options, torch_format=None):
    with gzip.open(trace_path, "rt", encoding="utf-8") as f:
        trace = json.load(f)
    parsed = autograd_profile._parse_kineto_results(ParserSelf(use_device),
                                                    ResultStandIn(stand_ins(trace)))
    events = EventList(parsed, use_device=use_device, profile_memory=profile_memory,
                       with_flops=with_flops)
    events._build_tree()
    case_dir = os.path.join(out_dir, name)
    os.makedirs(case_dir, exist_ok=True)
    with open(trace_path, "rb") as src, open(os.path.join(case_dir, "trace.json.gz"), "wb") as dst:
        dst.write(src.read())

    def key_averages(grouping):
        return events.key_averages(group_by_input_shapes=grouping.get("group_by_input_shape", False),
                                   group_by_stack_n=grouping.get("group_by_stack_n", 0))

    extra = {"built_from": os.path.basename(trace_path) + " by record_torch26_events.py"}
    if torch_format:
        extra["torch_format"] = torch_format
    record_tables(case_dir, key_averages, groupings, sort_keys, table_options, extra=extra)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    out, wanted = sys.argv[1], set(sys.argv[2:])
    device_keys = ["device_time", "device_time_total", "self_device_time_total",
                   "cuda_time_total", "self_cuda_time_total"]
    if not wanted or "nccl_allreduce_eventlist" in wanted:
        record(out, "nccl_allreduce_eventlist",
               os.path.join(SHARED, "nccl_parser_config_nccl_data.json.gz"),
               use_device="cuda", profile_memory=False, with_flops=False, groupings=[{}],
               sort_keys=SORT_KEYS + device_keys,
               table_options=[{"sort_by": "device_time_total", "row_limit": 8,
                               "max_name_column_width": 40, "header": "DDP all-reduce, torch 2.6"}])
        print("recorded nccl_allreduce_eventlist")
    if wanted:
        return 0
    record(out, "rocm_training_eventlist",
           os.path.join(SHARED, "amd_trace_mi250_minitoy_train_ROCm6_2_kineto.json.gz"),
           use_device="cuda", profile_memory=False, with_flops=False,
           groupings=[{}, {"group_by_input_shape": True}],
           sort_keys=SORT_KEYS + device_keys,
           table_options=[{"sort_by": "self_cuda_time_total", "row_limit": 4,
                           "max_name_column_width": 40, "header": "training on an MI250"},
                          {"sort_by": "device_time_total", "row_limit": 6,
                           "top_level_events_only": True}])
    print("recorded rocm_training_eventlist")
    record(out, "triton_eventlist", os.path.join(SHARED, "triton_example_triton_example.json.gz"),
           use_device="cuda", profile_memory=False, with_flops=False, groupings=[{}],
           sort_keys=["self_cuda_time_total", "cpu_time_total"], table_options=[])
    print("recorded triton_eventlist")
    record(out, "mlp_stack_eventlist",
           os.path.join(HERE, "cases", "mlp_training_stack_flops", "trace.json.gz"),
           use_device=None, profile_memory=True, with_flops=True,
           groupings=[{}, {"group_by_stack_n": 7}],
           sort_keys=SORT_KEYS + MEMORY_SORT_KEYS + ["flops"],
           table_options=[{"sort_by": "self_cpu_time_total", "row_limit": 6,
                           "max_src_column_width": 40}],
           torch_format="2")
    print("recorded mlp_stack_eventlist")
    return 0


if __name__ == "__main__":
    sys.exit(main())
