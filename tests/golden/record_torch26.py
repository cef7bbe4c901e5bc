#!/usr/bin/python3
"""Records golden cases with PyTorch 2.x (Debian 13's torch 2.6, CPU, with Kineto).

Run it inside the Debian 13 root (tests/torch2/in_root.sh). For each workload it writes, into
OUT_DIR/<case>/, the same layout record_torch.py writes for torch 1.13, so that run_golden.py
checks both:
  trace.json.gz          torch's own prof.export_chrome_trace() output (Kineto's JSON), gzipped
  tables/<variant>.txt   torch's prof.key_averages(...).table(...) text
  rows/<grouping>.json   every key_averages() row: key, count, times, memory, flops
  cases.json             the table variants (options for key_averages and table) and
                         "torch_version", the torch that printed them

What is not recorded, and why:
  * with_stack=True: Debian's torch 2.6 on Python 3.13 crashes (SIGSEGV in libtorch_python's
    Python tracer) as soon as a Python function runs under the profiler, so no 2.6 trace with
    stacks exists here. 2.6's printing of stacks is recorded by record_torch26_events.py instead.
  * with_flops=True: torch 2.6 computes FLOPs into its FunctionEvents but its
    export_chrome_trace() writes no "flops" argument, so no 2.6 trace carries them and profsh
    cannot print torch's "Total ..FLOPs" column from one (1.13's traces have "flops"; the 1.13
    cases cover the column). The training case is recorded without it.
  * time_unit: torch 2.6's table() has no such option (it came later, and torch 1.13 had none
    either); profsh's time_unit is checked by its unit tests (AveragesTable.FormatsLikeTorch).
  * group_by_overload_name: not in torch 2.6's key_averages().

Usage: record_torch26.py OUT_DIR [case ...]
"""
import gzip
import json
import os
import shutil
import sys

import torch
import torch.nn as nn
import torchvision.models as models
from torch.profiler import ProfilerActivity, profile, record_function

torch.manual_seed(0)
torch.set_num_threads(1)

# Every sort key torch 2.6 accepts that means something on a CPU-only run. The device keys are
# accepted too (all zero here, so they keep registration order); one of them shows that.
SORT_KEYS = ["cpu_time", "cpu_time_total", "self_cpu_time_total", "count", "key"]
MEMORY_SORT_KEYS = ["cpu_memory_usage", "self_cpu_memory_usage"]


def _device_attr(evt, name, name_113):
    return getattr(evt, name) if hasattr(evt, name) else getattr(evt, name_113)


def row_json(evt):
    return {
        "key": evt.key,
        "count": evt.count,
        "cpu_time_total": evt.cpu_time_total,
        "self_cpu_time_total": evt.self_cpu_time_total,
        # 1.13's names, for record_torch_events.py
        "cuda_time_total": _device_attr(evt, "device_time_total", "cuda_time_total"),
        "self_cuda_time_total": _device_attr(evt, "self_device_time_total",
                                             "self_cuda_time_total"),
        "cpu_memory_usage": evt.cpu_memory_usage,
        "self_cpu_memory_usage": evt.self_cpu_memory_usage,
        "flops": evt.flops,
        "input_shapes": str(evt.input_shapes),
        "stack": list(evt.stack or []),
    }


def grouping_name(grouping):
    if grouping.get("group_by_input_shape"):
        return "shape"
    if grouping.get("group_by_stack_n"):
        return "stack%d" % grouping["group_by_stack_n"]
    return "name"


def variant_name(gname, opts):
    if not opts:
        return gname + "__unsorted"
    name = gname + "__" + "_".join("%s-%s" % (k, v) for k, v in sorted(opts.items()) if k != "header")
    return name + ("_header" if "header" in opts else "")


def record_tables(case_dir, key_averages, groupings, sort_keys, table_options, extra=None):
    """Writes tables/, rows/ and cases.json; key_averages(grouping) gives torch's EventList."""
    os.makedirs(os.path.join(case_dir, "tables"), exist_ok=True)
    os.makedirs(os.path.join(case_dir, "rows"), exist_ok=True)
    variants = []
    for grouping in groupings:
        gname = grouping_name(grouping)
        avgs = key_averages(grouping)
        with open(os.path.join(case_dir, "rows", gname + ".json"), "w") as f:
            json.dump([row_json(e) for e in avgs], f, indent=0, ensure_ascii=False)
        options = [{"sort_by": k, "row_limit": 10} for k in sort_keys]
        options.append({"sort_by": "cpu_time_total"})  # default row_limit (100)
        options.append({})                             # registration order
        options.extend(table_options)
        for opts in options:
            vname = variant_name(gname, opts)
            with open(os.path.join(case_dir, "tables", vname + ".txt"), "w") as f:
                f.write(avgs.table(**opts))
            variants.append({"name": vname, "key_averages": grouping, "table": opts})
    spec = {"torch_version": torch.__version__, "variants": variants, "groupings": groupings}
    spec.update(extra or {})
    with open(os.path.join(case_dir, "cases.json"), "w") as f:
        json.dump(spec, f, indent=1)


def record_case(out_dir, name, prof, groupings, extra_sort_keys=(), table_options=()):
    case_dir = os.path.join(out_dir, name)
    os.makedirs(case_dir, exist_ok=True)
    plain = os.path.join(case_dir, "trace.json")
    prof.export_chrome_trace(plain)
    with open(plain, "rb") as src, gzip.open(plain + ".gz", "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(plain)

    def key_averages(grouping):
        # torch 1.13's and 2.6's keyword is group_by_input_shape (singular) on the profiler.
        return prof.key_averages(**grouping)

    record_tables(case_dir, key_averages, groupings, list(SORT_KEYS) + list(extra_sort_keys),
                  table_options)


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
    record_case(out_dir, "resnet18_shapes_memory", prof, [{}, {"group_by_input_shape": True}],
                extra_sort_keys=MEMORY_SORT_KEYS + ["device_time_total"],
                table_options=[{"sort_by": "self_cpu_time_total", "row_limit": 5,
                                "max_name_column_width": 30, "header": "resnet18, narrow names"},
                               {"sort_by": "cpu_time_total", "row_limit": 8, "top_level_events_only": True},
                               {"sort_by": "count", "row_limit": 6, "max_shapes_column_width": 40},
                               {"sort_by": "self_cpu_memory_usage", "row_limit": -1,
                                "max_name_column_width": None}])


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
    # No with_flops: torch 2.6's export_chrome_trace() writes no "flops" argument (1.13's Kineto
    # did), so FLOPs are in torch's table but in no 2.6 trace; see the module docstring.
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True) as prof:
        for step in range(2):
            with record_function("train_step_%d" % step):
                opt.zero_grad()
                loss = loss_fn(model(x), y)
                loss.backward()
                opt.step()
    record_case(out_dir, "mlp_training_memory", prof, [{}, {"group_by_input_shape": True}],
                extra_sort_keys=MEMORY_SORT_KEYS + ["flops"],
                table_options=[{"sort_by": "flops", "row_limit": 5, "top_level_events_only": True,
                                "header": "training"}])


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
        record_case(out_dir, "schedule_unicode_names", p, [{}, {"group_by_input_shape": True}],
                    table_options=[{"sort_by": "self_cpu_time_total", "row_limit": 10,
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
    "mlp_training_memory": case_training,
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
