#!/usr/bin/env python3
"""HTA's critical path analysis of one step of one trace, timed: what bench/critical_path_bench.sh
sets beside profsh's t:critical_path on the same step.

usage: hta_critical_path.py HTA_CHECKOUT TRACE ANNOTATION INSTANCE

Runs with Debian's python3-pandas and python3-networkx. Prints one line:
  hta: load S s, critical path S s, length US us, N nodes
"""
import gzip
import json
import sys
import time

hta_checkout, trace, annotation, instance = sys.argv[1:5]
sys.path.insert(0, hta_checkout)

import logging  # noqa: E402

logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis  # noqa: E402

with (gzip.open if trace.endswith(".gz") else open)(trace, "rt") as f:
    head = json.load(f)
rank = head.get("distributedInfo", {}).get("rank", 0) if isinstance(head, dict) else 0
del head
t0 = time.perf_counter()
analyzer = TraceAnalysis(trace_files={rank: trace})
t1 = time.perf_counter()
g, ok = analyzer.critical_path_analysis(rank=rank, annotation=annotation,
                                        instance_id=int(instance), data_load_events=None)
t2 = time.perf_counter()
if not ok:
    sys.exit("hta: critical_path() failed")
length = sum(e.weight for e in g.critical_path_edges_set)
print("hta: load %.3f s, critical path %.3f s, length %d us, %d nodes" % (
    t1 - t0, t2 - t1, length, len(g.node_list)))
