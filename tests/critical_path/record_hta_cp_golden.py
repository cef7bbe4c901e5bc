#!/usr/bin/env python3
"""Records HTA's critical path analysis as golden files for profsh's t:critical_path.

usage: record_hta_cp_golden.py HTA_CHECKOUT TRACES_DIR OUT_DIR

HTA_CHECKOUT is a checkout of facebookresearch/HolisticTraceAnalysis (its `hta` package is
imported from there); runs with Debian's python3-pandas, python3-networkx (and what
tests/gpu_analyses/record_hta_golden.py lists). HTA runs with its defaults (no zero-weight
launch edges). Each case writes OUT_DIR/<case>/:
  summary.csv    HTA's summary(): bound_by, pct
  breakdown.csv.gz  get_critical_path_breakdown() in path order: name, ts, dur, type, duration,
                 bound_by (ts/dur/name of the event the edge is attributed to)
  path.csv.gz    critical_path_nodes in order: name, ts, dur, pid, tid, stream, is_start
  meta.json      length (sum of the path's edge weights), node and edge counts by type, and
                 whether the longest path is unique (no tie at any step of the DP), and whether HTA added
                 its zero-weight launch edges (CRITICAL_PATH_ADD_ZERO_WEIGHT_LAUNCH_EDGE)
A case HTA fails on is written as error.txt.
"""
import gzip
import json
import os
import sys

hta_checkout, traces_dir, out_dir = sys.argv[1:4]
sys.path.insert(0, hta_checkout)

import logging  # noqa: E402

logging.disable(logging.WARNING)
import networkx as nx  # noqa: E402
from hta.trace_analysis import TraceAnalysis  # noqa: E402

FORWARD = "[param|pytorch.model.alex_net|0|0|0|measure|forward]"
# case -> (trace file under TRACES_DIR, annotation, instance_id, data_load_events)
CASES = {
    "simple_add": ("critical_path_simple_add_benchmark_result_493459_1694039959_trace.json.gz",
                   FORWARD, 1, None),
    "simple_add_whole": ("critical_path_simple_add_benchmark_result_493459_1694039959_trace.json.gz",
                         "", 0, ["data_load"]),
    # HTA's own test runs with CRITICAL_PATH_ADD_ZERO_WEIGHT_LAUNCH_EDGE=1 (315 path nodes).
    "simple_add_launch_edges": (
        "critical_path_simple_add_benchmark_result_493459_1694039959_trace.json.gz", FORWARD, 1,
        None),
    "alexnet": ("critical_path_alexnet_benchmark_result_2869224_1695835535_trace.json.gz",
                FORWARD, 1, None),
    "alexnet_range": ("critical_path_alexnet_benchmark_result_2869224_1695835535_trace.json.gz",
                      FORWARD, (0, 1), None),
    "event_sync": ("critical_path_cuda_event_sync_event_sync_trace.json.gz", "ProfilerStep", 0,
                   None),
    "event_sync_multi_stream": ("critical_path_cuda_event_sync_multi_stream_event_sync_trace.json.gz",
                                "", None, None),
    "ns_resolution_step1": ("ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
                            "ProfilerStep", 1, None),
    "amd_step0": ("amd_trace_mi250_minitoy_train_ROCm6_2_kineto.json.gz", "ProfilerStep", 0, None),
    "nccl_step0": ("nccl_parser_config_nccl_data.json.gz", "ProfilerStep", 0, None),
    "execution_trace_whole": ("execution_trace_benchmark_simple_add_trace.json.gz", "", 0, None),
    "triton_whole": ("triton_example_triton_example.json.gz", "", 0, None),
}


def csv_field(v):
    s = str(v)
    if any(c in s for c in ',"\n'):
        s = '"' + s.replace('"', '""') + '"'
    return s


def write_rows(path, header, rows):
    # mtime=0: the same rows give the same bytes.
    opener = (lambda: gzip.GzipFile(path, "wb", mtime=0)) if path.endswith(".gz") else None
    if opener:
        import io
        with io.TextIOWrapper(opener(), encoding="utf-8", newline="") as f:
            f.write(",".join(header) + "\n")
            for r in rows:
                f.write(",".join(csv_field(x) for x in r) + "\n")
        return
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(csv_field(x) for x in r) + "\n")


def unique_longest_path(g, path):
    """Whether no other path has the same length: networkx's DP with every tie noted."""
    dist = {}
    tie = {}
    for v in nx.topological_sort(g):
        best, ties = 0, False
        preds = [(dist[u] + d["weight"], u) for u, d in g.pred[v].items()]
        if preds:
            best = max(p[0] for p in preds)
            if best < 0:
                best = 0
            ties = sum(1 for p in preds if p[0] == best) > 1
        dist[v] = best
        tie[v] = ties
    end = path[-1]
    top = dist[end]
    if sum(1 for v in dist if dist[v] == top) > 1:
        return False
    return not any(tie[v] for v in path[1:])


ZERO_WEIGHT_LAUNCH_EDGES = {"simple_add_launch_edges"}


def record(case, trace_name, annotation, instance, data_load):
    import hta.configs.env_options as hta_options
    launch_edges = case in ZERO_WEIGHT_LAUNCH_EDGES
    hta_options.HTAEnvOptions.instance().set_critical_path_add_zero_weight_launch_edges(
        launch_edges)
    out = os.path.join(out_dir, case)
    os.makedirs(out, exist_ok=True)
    path = os.path.join(traces_dir, trace_name)
    with gzip.open(path) as f:
        head = json.load(f)
    trace_rank = head.get("distributedInfo", {}).get("rank", 0) if isinstance(head, dict) else 0
    try:
        analyzer = TraceAnalysis(trace_files={trace_rank: path})
        rank = analyzer.t.get_ranks()[0]
        result = analyzer.critical_path_analysis(rank=rank, annotation=annotation,
                                                 instance_id=instance,
                                                 data_load_events=data_load)
        if result is None:
            raise RuntimeError("HTA returned None (annotation not found)")
        g, ok = result
        if not ok:
            raise RuntimeError("HTA's critical_path() failed (graph not valid)")
    except Exception as e:
        with open(os.path.join(out, "error.txt"), "w") as f:
            f.write(f"{type(e).__name__}: {e}\n")
        return
    df = g.trace_df
    sym = g.symbol_table.get_sym_table()

    def ev(i):
        if i is None or i < 0:
            return ("", "", "", "", "", "")
        r = df.loc[i]
        return (sym[int(r["name"])], int(r["ts"]), int(r["dur"]), int(r["pid"]), int(r["tid"]),
                int(r["stream"]))

    nodes = g.critical_path_nodes
    write_rows(os.path.join(out, "path.csv.gz"),
               ["name", "ts", "dur", "pid", "tid", "stream", "is_start"],
               [ev(g.node_list[n].ev_idx) + (int(g.node_list[n].is_start),) for n in nodes])
    rows = []
    length = 0
    for u, v in zip(nodes, nodes[1:]):
        e = g.edges[u, v]["object"]
        length += e.weight
        attributed = g.get_event_attribution_for_edge(e)
        name, ts, dur = ev(attributed)[:3]
        rows.append((name, ts, dur, e.type.value, e.weight))
    # bound_by as HTA classifies each edge (its breakdown is a set: matched back by edge).
    bdf = g.get_critical_path_breakdown()
    bound = {}
    for r in bdf.itertuples(index=False):
        key = (None if r.event_idx != r.event_idx else int(r.event_idx), r.type, int(r.duration))
        bound.setdefault(key, []).append(r.bound_by)
    out_rows = []
    for (u, v), r in zip(zip(nodes, nodes[1:]), rows):
        e = g.edges[u, v]["object"]
        key = (g.get_event_attribution_for_edge(e), e.type.value, int(e.weight))
        out_rows.append(r + (bound[key].pop(),))
    write_rows(os.path.join(out, "breakdown.csv.gz"),
               ["name", "ts", "dur", "type", "duration", "bound_by"], out_rows)
    summary = g.summary()
    write_rows(os.path.join(out, "summary.csv"), ["bound_by", "pct"],
               [(k, repr(float(v))) for k, v in summary.items()])
    counts = {}
    for u, v in g.edges:
        t = g.edges[u, v]["object"].type.value
        counts[t] = counts.get(t, 0) + 1
    meta = {"trace": trace_name, "annotation": annotation,
            "instance": list(instance) if isinstance(instance, tuple) else instance,
            "data_load_events": data_load, "length": int(length),
            "zero_weight_launch_edges": launch_edges,
            "nodes": g.number_of_nodes(), "edges": counts,
            "unique": unique_longest_path(g, nodes)}
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")


for case, args in CASES.items():
    if len(sys.argv) > 4 and case not in sys.argv[4:]:
        continue
    print("recording", case, flush=True)
    record(case, *args)
