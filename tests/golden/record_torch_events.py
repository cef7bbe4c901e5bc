#!/usr/bin/python3
"""Records torch 1.13's tables of a GPU trace, which Debian's torch 1.13 (CPU only, no Kineto)
cannot record itself: record_torch26_events.py's method, run by torch 1.13's own code.

Run it with Debian 12's /usr/bin/python3 (torch 1.13).

What this script builds (the only part that is not torch's):
  * the trace as torch 1.13's Kineto would have written it: every "ts" and "dur" in whole
    microseconds (1.13's start_us() and duration_us() are integers: an event's start and end
    are floored to the microsecond, its duration their difference), and without the arguments
    only torch 2.x writes ("Record function id", "Concrete Inputs", "Input Strides"), so that
    profsh reads it as a 1.13 trace. That file is the case's trace.json.gz.
  * KinetoEvent stand-ins, built by record_torch26_events.stand_ins() from that trace (its
    docstring says which event becomes what; 1.13's KinetoEvent gives CUDA events, a
    gpu_user_annotation span among them, the correlation of the activity Kineto linked them to,
    as 2.x's does: torch/csrc/profiler/collection.h's ExtraFields<EventType::Kineto> holds
    linked_activity_ in the 1.13 headers), with 1.13's accessors start_us() and duration_us().
What is torch's own: torch.autograd.profiler.profile._parse_kineto_results (1.13's), EventList
and its _build_tree, key_averages() and table().

Traces: ../shared/traces/nccl_parser_config_nccl_data.json.gz, as the torch 2.6 case
cases_torch26/nccl_allreduce_eventlist holds it (read from there, so that the live golden test
needs no shared folder): a two-rank DDP training step on A100s with NCCL all-reduces whose
kernels belong to record_param_comms while a gpu_user_annotation span (nccl:all_reduce) covers
each of them on the device (issue 27).

Usage: record_torch_events.py OUT_DIR
"""
import gzip
import json
import os
import sys

import torch
from torch.autograd.profiler import profile as autograd_profile
from torch.autograd.profiler_util import EventList

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from record_torch26 import SORT_KEYS, record_tables  # noqa: E402
from record_torch26_events import HERE, stand_ins, us_to_ns  # noqa: E402

TORCH2_ONLY_ARGS = ("Record function id", "Concrete Inputs", "Input Strides")


class Torch113Event:
    """1.13's KinetoEvent accessors over a stand-in that speaks 2.x's nanoseconds."""

    def __init__(self, event):
        self._e = event

    def __getattr__(self, name):
        return getattr(self._e, name)

    def start_us(self): return self._e.start_ns() // 1000
    def duration_us(self): return (self._e.end_ns() - self._e.start_ns()) // 1000


class ResultStandIn:
    def __init__(self, events):
        self._events = events

    def events(self): return self._events
    def trace_start_us(self): return 0


def whole_microseconds(trace):
    """The trace as 1.13's Kineto writes it: integer times, no 2.x-only arguments."""
    for e in trace["traceEvents"]:
        if "ts" not in e:
            continue
        start_ns = us_to_ns(e["ts"])
        if "dur" in e:
            end_ns = start_ns + us_to_ns(e["dur"])
            e["dur"] = end_ns // 1000 - start_ns // 1000
        e["ts"] = start_ns // 1000
        for key in TORCH2_ONLY_ARGS:
            e.get("args", {}).pop(key, None)
    return trace


def record(out_dir, name, trace_path, groupings, sort_keys, table_options):
    with gzip.open(trace_path, "rt", encoding="utf-8") as f:
        trace = whole_microseconds(json.load(f))
    case_dir = os.path.join(out_dir, name)
    os.makedirs(case_dir, exist_ok=True)
    with gzip.open(os.path.join(case_dir, "trace.json.gz"), "wt", encoding="utf-8",
                   compresslevel=9) as f:
        json.dump(trace, f, separators=(",", ":"))
    events = [Torch113Event(e) for e in stand_ins(trace)]
    parsed = autograd_profile._parse_kineto_results(None, ResultStandIn(events))
    event_list = EventList(parsed, use_cuda=True, profile_memory=False, with_flops=False)
    event_list._build_tree()

    def key_averages(grouping):
        return event_list.key_averages(group_by_input_shapes=grouping.get("group_by_input_shape", False),
                                       group_by_stack_n=grouping.get("group_by_stack_n", 0))

    extra = {"built_from": "nccl_parser_config_nccl_data.json.gz (cases_torch26/" + name +
             "/trace.json.gz) by record_torch_events.py"}
    record_tables(case_dir, key_averages, groupings, sort_keys, table_options, extra=extra)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    record(sys.argv[1], "nccl_allreduce_eventlist",
           os.path.join(HERE, "cases_torch26", "nccl_allreduce_eventlist", "trace.json.gz"),
           groupings=[{}],
           sort_keys=SORT_KEYS + ["cuda_time_total", "self_cuda_time_total"],
           table_options=[{"sort_by": "cuda_time_total", "row_limit": 8,
                           "max_name_column_width": 40, "header": "DDP all-reduce, torch 1.13"}])
    print("recorded nccl_allreduce_eventlist")
    return 0


if __name__ == "__main__":
    sys.exit(main())
