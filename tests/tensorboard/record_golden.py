#!/usr/bin/env python3
"""Records the TensorBoard profiler plugin's answer for every view as golden JSON.

usage: record_golden.py TRACES_DIR OUT_DIR [NAME ...]

Each Kineto trace in TRACES_DIR (*.json or *.json.gz; the NAMEs given, or all) becomes a run of
its own, its file linked as `worker0.pt.trace.json[.gz]` (the plugin takes the worker's name from
the file name); the plugin's two sample runs come as they are. For every run, worker and span the
plugin lists, OUT_DIR/RUN/WORKER[.SPAN]/ gets one file per route (README.md's table), the JSON
re-indented (values untouched); where a route fails, ROUTE.error holds the status or exception.
RUN is the trace's file name up to `.json`, or the sample run's folder name.
"""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tb_harness  # noqa: E402

# file stem -> (route, query parameters beyond run/worker/span). Every route of the plugin but
# the raw trace, the run comparison (diff, diffnode) and the operator tree it compares (tree).
WORKER_ROUTES = {
    "overview": ("overview", {"view": "Overview"}),
    "operation_pie": ("operation", {"group_by": "Operation"}),
    "operation_pie_input": ("operation", {"group_by": "OperationAndInputShape"}),
    "operation_table": ("operation/table", {"group_by": "Operation"}),
    "operation_table_input": ("operation/table", {"group_by": "OperationAndInputShape"}),
    "kernel_pie": ("kernel", {"group_by": "Kernel"}),
    "kernel_table": ("kernel/table", {"group_by": "Kernel"}),
    "kernel_op_table": ("kernel/table", {"group_by": "KernelNameAndOpName"}),
    "kernel_tc_pie": ("kernel/tc_pie", {}),
    "memory": ("memory", {}),
    "memory_curve": ("memory_curve", {}),
    "memory_events": ("memory_events", {}),
    "module": ("module", {}),
}
DISTRIBUTED_ROUTES = {
    "gpuinfo": "distributed/gpuinfo",
    "overlap": "distributed/overlap",
    "waittime": "distributed/waittime",
    "commops": "distributed/commops",
}


def run_name(file_name):
    return file_name.split(".json")[0]


def write_json(path, body):
    with open(path, "w") as f:
        json.dump(json.loads(body), f, indent=1)
        f.write("\n")


def record_route(plugin, folder, stem, route, params):
    try:
        status, body = plugin.request(route, **params)
    except Exception as e:  # the route raised: the plugin fails on this input
        status, body = None, f"{type(e).__name__}: {e}".encode()
    if status == 200:
        write_json(os.path.join(folder, stem + ".json"), body)
        return json.loads(body)
    with open(os.path.join(folder, stem + ".error"), "w") as f:
        f.write((f"HTTP {status}: " if status else "") + body.decode(errors="replace").strip() + "\n")
    return None


def record_run(plugin, run, out):
    run_dir = os.path.join(out, run)
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    views = json.loads(plugin.get("views", run=run))
    with open(os.path.join(run_dir, "views.json"), "w") as f:
        json.dump(views, f)
        f.write("\n")
    workers = set()
    for view in views:
        workers.update(json.loads(plugin.get("workers", run=run, view=view)))
    for worker in sorted(workers):
        spans = json.loads(plugin.get("spans", run=run, worker=worker)) or [None]
        for span in spans:
            folder = os.path.join(run_dir, worker if span is None else f"{worker}.{span}")
            os.makedirs(folder)
            where = {"run": run, "worker": worker}
            if span is not None:
                where["span"] = str(span)
            routes = WORKER_ROUTES if worker != "All" else \
                {stem: (route, {}) for stem, route in DISTRIBUTED_ROUTES.items()}
            for stem, (route, params) in routes.items():
                answer = record_route(plugin, folder, stem, route, {**where, **params})
                if stem == "overview" and answer is not None:
                    with open(os.path.join(folder, "recommendations.html"), "w") as f:
                        f.write(answer.get("recommendations", "") + "\n")
                    if "gpu_metrics" in answer:
                        with open(os.path.join(folder, "gpu_metrics.json"), "w") as f:
                            json.dump(answer["gpu_metrics"], f, indent=1)
                            f.write("\n")


def main():
    traces_dir, out = sys.argv[1:3]
    names = sys.argv[3:] or sorted(n for n in os.listdir(traces_dir)
                                   if n.endswith(".json") or n.endswith(".json.gz"))
    logdir = tempfile.mkdtemp(prefix="tb_golden.")
    try:
        for name in names:
            os.makedirs(os.path.join(logdir, run_name(name)))
            suffix = ".gz" if name.endswith(".gz") else ""
            os.symlink(os.path.abspath(os.path.join(traces_dir, name)),
                       os.path.join(logdir, run_name(name), "worker0.pt.trace.json" + suffix))
        samples = tb_harness.sample_runs_dir()
        for sample in sorted(os.listdir(samples)):
            os.symlink(os.path.join(samples, sample), os.path.join(logdir, sample))
        with tb_harness.Plugin(logdir) as plugin:
            for run in plugin.runs():
                record_run(plugin, run, out)
                print(f"recorded {run}")
    finally:
        shutil.rmtree(logdir)


if __name__ == "__main__":
    main()
