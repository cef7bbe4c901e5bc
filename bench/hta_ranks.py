#!/usr/bin/env python3
"""Loads a job's rank traces with HTA (TraceAnalysis over every rank) and runs its temporal
breakdown, as bench/ranks_bench.sh does with profsh.load_ranks.

usage: hta_ranks.py HTA_CHECKOUT TRACE...   (rank r is the r-th trace)
"""
import logging
import sys

sys.path.insert(0, sys.argv[1])
logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis  # noqa: E402

analyzer = TraceAnalysis(trace_files={rank: path for rank, path in enumerate(sys.argv[2:])})
breakdown = analyzer.get_temporal_breakdown(visualize=False)
print("hta: %d ranks, %d temporal rows" % (len(sys.argv) - 2, len(breakdown)))
