#!/bin/sh
# `profsh diff` beside HTA's TraceDiff (compare_traces + ops_diff, bench/hta_diff.py) on the two
# largest shared traces, load included: wall time and peak memory (GNU time's %e and %M). HTA
# runs from a checkout given as argument, with Debian's python3-pandas (see
# tests/gpu_analyses/hta_golden/README.md for its packages).
#
# HTA runs at `nice -n 19` (HTA_NICE overrides), so that it yields on a shared machine; on an
# idle one that changes nothing.
#
#   bench/trace_diff_bench.sh BUILD_DIR HTA_CHECKOUT
set -e
build=$(cd "$1" && pwd)
hta=$2
here=$(cd "$(dirname "$0")" && pwd)
traces="$here/../../shared/traces"
control="$traces/ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
test="$traces/nccl_parser_config_nccl_data.json.gz"
times=$(mktemp)
trap 'rm -f "$times"' EXIT
for tool in profsh hta; do
  if [ $tool = profsh ]; then
    set -- "$build/profsh" diff "$control" "$test" --format csv
  else
    set -- nice -n "${HTA_NICE:-19}" /usr/bin/python3 "$here/hta_diff.py" "$hta" "$control" "$test"
  fi
  /usr/bin/time -f "%e %M" -o "$times" "$@" > /dev/null 2>&1
  set -- $(tail -1 "$times")
  printf "%-7s %6.2f s %6.0f MB\n" $tool "$1" "$(echo "$2 / 1024" | bc -l)"
done
