#!/usr/bin/python3
"""Records golden cases with the real PyTorch (Debian's torch 1.13, CPU).

For each workload it writes, into OUT_DIR/<case>/:
  trace.json.gz       the events as Kineto writes them (cpu_op / user_annotation complete events,
                      "[memory]" instant events; args "External id", "Input Dims", "Input type",
                      "Call stack", "Sequence number", "Fwd thread id", "flops"), in the order
                      torch's profiler returned them. Debian's build has no Kineto, so this file
                      is produced here from kineto_results.events() with Kineto's field names.
  legacy.json         torch's own export_chrome_trace() output (the legacy bare-array format),
                      only for cases recorded without memory/shape options
  tables/<variant>.txt   torch's key_averages(...).table(...) text
  rows/<grouping>.json   every key_averages() row: key, count, times, memory, flops, shapes, stack
  cases.json          the list of table variants (options for key_averages and table)

Usage: record_torch.py OUT_DIR [case ...]
The committed cases in tests/golden/cases/ were recorded with this script; the live golden test
runs it again into a temporary folder when torch is installed.
"""
import gzip
import json
import os
import sys
import threading

import torch
import torch.nn as nn
import torchvision.models as models
from torch.profiler import ProfilerActivity, profile, record_function

torch.manual_seed(0)
torch.set_num_threads(1)

SORT_KEYS = ["cpu_time_total", "self_cpu_time_total", "count"]
MEMORY_SORT_KEYS = ["cpu_memory_usage", "self_cpu_memory_usage"]


def kineto_events_json(prof, with_stack):
    """The trace as Kineto JSON, from the profiler's raw events."""
    result = prof.profiler.kineto_results
    pid = os.getpid()
    events = []
    for e in result.events():
        name = e.name()
        tid = e.start_thread_id()
        if name == "[memory]":
            events.append({
                "ph": "i", "cat": "cpu_instant_event", "s": "t", "name": name,
                "pid": pid, "tid": tid, "ts": e.start_us(),
                "args": {"Device Type": int(e.device_type().value) if hasattr(e.device_type(), "value") else 0,
                         "Device Id": e.device_index(), "Bytes": e.nbytes()},
            })
            continue
        args = {"External id": e.correlation_id()}
        shapes = e.shapes()
        if shapes:
            args["Input Dims"] = shapes
            args["Input type"] = e.dtypes()
        stack = e.stack()
        if stack:
            args["Call stack"] = ";".join(stack)
        if e.sequence_nr() >= 0:
            args["Fwd thread id"] = e.fwd_thread_id()
            args["Sequence number"] = e.sequence_nr()
        if e.flops() > 0:
            args["flops"] = e.flops()
        # RecordScope::USER_SCOPE (7) marks record_function ranges, which Kineto files under
        # user_annotation; everything else is an operator.
        cat = "user_annotation" if e.scope() == 7 else "cpu_op"
        events.append({"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
                       "ts": e.start_us(), "dur": e.duration_us(), "args": args})
    return events


def write_trace(path, prof, flags):
    doc = {"schemaVersion": 1, "deviceProperties": []}
    doc.update(flags)
    doc["traceEvents"] = kineto_events_json(prof, flags.get("with_stack", 0))
    doc["traceName"] = os.path.basename(os.path.dirname(path))
    with gzip.open(path, "wt", encoding="utf-8") as f:
        # Kineto writes one event per line; keep that shape.
        f.write("{\n")
        for k, v in doc.items():
            if k == "traceEvents":
                f.write('  "traceEvents": [\n')
                f.write(",\n".join("  " + json.dumps(ev, ensure_ascii=False) for ev in v))
                f.write("\n  ],\n")
            else:
                f.write("  %s: %s,\n" % (json.dumps(k), json.dumps(v)))
        f.write('  "displayTimeUnit": "ms"\n}\n')


def row_json(evt):
    return {
        "key": evt.key,
        "count": evt.count,
        "cpu_time_total": evt.cpu_time_total,
        "self_cpu_time_total": evt.self_cpu_time_total,
        "cuda_time_total": evt.cuda_time_total,
        "self_cuda_time_total": evt.self_cuda_time_total,
        "cpu_memory_usage": evt.cpu_memory_usage,
        "self_cpu_memory_usage": evt.self_cpu_memory_usage,
        "flops": evt.flops,
        "input_shapes": str(evt.input_shapes),
        "stack": list(evt.stack or []),
    }


def record_case(out_dir, name, prof, flags, groupings, extra_sort_keys=(), legacy=False, table_options=()):
    case_dir = os.path.join(out_dir, name)
    os.makedirs(os.path.join(case_dir, "tables"), exist_ok=True)
    os.makedirs(os.path.join(case_dir, "rows"), exist_ok=True)
    write_trace(os.path.join(case_dir, "trace.json.gz"), prof, flags)
    if legacy:
        prof.export_chrome_trace(os.path.join(case_dir, "legacy.json"))
    variants = []
    for grouping in groupings:
        gname = "shape" if grouping.get("group_by_input_shape") else (
            "stack%d" % grouping["group_by_stack_n"] if grouping.get("group_by_stack_n") else "name")
        avgs = prof.key_averages(**grouping)
        with open(os.path.join(case_dir, "rows", gname + ".json"), "w") as f:
            json.dump([row_json(e) for e in avgs], f, indent=0, ensure_ascii=False)
        sort_keys = list(SORT_KEYS) + list(extra_sort_keys)
        options = [{"sort_by": k, "row_limit": 10} for k in sort_keys]
        options.append({"sort_by": "cpu_time_total"})  # default row_limit (100)
        options.append({})                             # registration order
        options.extend(table_options)
        for opts in options:
            vname = gname + "__" + "_".join("%s-%s" % (k, v) for k, v in sorted(opts.items()) if k != "header") \
                if opts else gname + "__unsorted"
            if "header" in opts:
                vname += "_header"
            with open(os.path.join(case_dir, "tables", vname + ".txt"), "w") as f:
                f.write(avgs.table(**opts))
            variants.append({"name": vname, "key_averages": grouping, "table": opts})
    with open(os.path.join(case_dir, "cases.json"), "w") as f:
        json.dump({"variants": variants, "groupings": groupings}, f, indent=1)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def case_resnet18(out_dir):
    model = models.resnet18()
    inputs = torch.randn(2, 3, 32, 32)
    model(inputs)  # warm up allocators and kernels
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True) as prof:
        with record_function("model_inference"):
            model(inputs)
    record_case(out_dir, "resnet18_shapes_memory", prof,
                {"record_shapes": 1, "profile_memory": 1},
                [{}, {"group_by_input_shape": True}], extra_sort_keys=MEMORY_SORT_KEYS,
                table_options=[{"sort_by": "self_cpu_time_total", "row_limit": 5,
                                "max_name_column_width": 30, "header": "resnet18, narrow names"},
                               {"sort_by": "cpu_time_total", "row_limit": 8, "top_level_events_only": True},
                               {"sort_by": "count", "row_limit": 6, "max_shapes_column_width": 40}])


def case_legacy(out_dir):
    model = models.resnet18().eval()
    inputs = torch.randn(1, 3, 32, 32)
    model(inputs)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with record_function("model_inference"):
            model(inputs)
    record_case(out_dir, "resnet18_legacy_export", prof, {}, [{}], legacy=True)


def case_training(out_dir):
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(16, 64)
    y = torch.randint(0, 10, (16,))
    loss_fn = nn.CrossEntropyLoss()
    for _ in range(2):
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True,
                 with_stack=True, with_flops=True) as prof:
        for step in range(2):
            with record_function("train_step_%d" % step):
                opt.zero_grad()
                loss = loss_fn(model(x), y)
                loss.backward()
                opt.step()
    record_case(out_dir, "mlp_training_stack_flops", prof,
                {"record_shapes": 1, "profile_memory": 1, "with_stack": 1, "with_flops": 1},
                [{}, {"group_by_input_shape": True}, {"group_by_stack_n": 5}],
                extra_sort_keys=MEMORY_SORT_KEYS + ["flops"])


def case_schedule_unicode(out_dir):
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(4))
    x = torch.randn(2, 3, 16, 16)
    model(x)
    recorded = []

    def ready(p):
        # The profiler object is reused by the next cycle, so record the window right here.
        if recorded:
            return
        recorded.append(True)
        record_case(out_dir, "schedule_unicode_names", p, {"record_shapes": 1},
                    [{}, {"group_by_input_shape": True}],
                    table_options=[{"sort_by": "cpu_time", "row_limit": 10},
                                   {"sort_by": "key", "row_limit": 12},
                                   {"sort_by": "self_cpu_time_total", "row_limit": 10,
                                    "max_name_column_width": 20}])

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                 schedule=torch.profiler.schedule(wait=1, warmup=1, active=3),
                 on_trace_ready=ready) as prof:
        for step in range(6):
            with record_function("注意力块 attention ünïcode"):
                model(x)
            with record_function("a_very_long_user_annotation_name_that_is_longer_than_the_name_column"):
                torch.mm(torch.randn(8, 8), torch.randn(8, 8))
            prof.step()
    assert recorded, "the schedule produced no trace"


CASES = {
    "resnet18_shapes_memory": case_resnet18,
    "resnet18_legacy_export": case_legacy,
    "mlp_training_stack_flops": case_training,
    "schedule_unicode_names": case_schedule_unicode,
}

if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    out = sys.argv[1]
    wanted = sys.argv[2:] or list(CASES)
    for name in wanted:
        CASES[name](out)
        print("recorded", name)
