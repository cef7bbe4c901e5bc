#!/usr/bin/env python3
"""HTA's TraceDiff of two trace files: compare_traces and ops_diff with default options, as
`profsh diff CONTROL TEST` computes them (for bench/trace_diff_bench.sh).

usage: hta_diff.py HTA_CHECKOUT CONTROL TEST
"""
import gzip
import json
import logging
import sys

hta_checkout, control, test = sys.argv[1:4]
sys.path.insert(0, hta_checkout)
logging.disable(logging.WARNING)
from hta.common.trace import Trace  # noqa: E402
from hta.trace_diff import LabeledTrace, TraceDiff  # noqa: E402


def labeled(path, label):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path) as f:
        head = json.load(f)
    rank = head.get("distributedInfo", {}).get("rank", 0) if isinstance(head, dict) else 0
    return LabeledTrace(label=label, t=Trace(trace_files={rank: path}))


c, t = labeled(control, "control"), labeled(test, "test")
df = TraceDiff.compare_traces(c, t)
groups = TraceDiff.ops_diff(c, t)
print(len(df), "names;", ", ".join(f"{len(v)} {k}" for k, v in groups.items()))
