#!/bin/sh
# Load + every device-time analysis, profsh beside HTA on the same files in the same run: wall
# time and peak memory (GNU time's %e and %M). HTA runs from a checkout given as argument, with
# Debian's python3-pandas (see tests/gpu_analyses/hta_golden/README.md for its packages).
#
#   bench/gpu_analyses_bench.sh BUILD_DIR HTA_CHECKOUT [WORK_DIR] [--skip-hta-1g]
set -e
build=$(cd "$1" && pwd)
hta=$2
work=${3:-/tmp/profsh_bench}
skip_hta_1g=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
traces="$here/../../shared/traces"
mkdir -p "$work"
[ -f "$work/kineto_100m.json" ] || "$build/bench/gen_kineto_trace" "$work/kineto_100m.json" 100
[ -f "$work/kineto_1g.json" ] || "$build/bench/gen_kineto_trace" "$work/kineto_1g.json" 1024

measure() {  # label command...
  label=$1
  shift
  /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" > "$work/out.txt" 2>&1 || echo "  ($label failed: $(tail -1 "$work/out.txt"))"
  set -- $(cat "$work/time.txt" | tail -1)
  echo "$1 $2"
}

printf "%-60s %10s %10s %10s %10s %8s %8s\n" trace "profsh s" "profsh MB" "HTA s" "HTA MB" speedup "memory"
for trace in "$traces/ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz" \
             "$traces/nccl_parser_config_nccl_data.json.gz" \
             "$work/kineto_100m.json" "$work/kineto_1g.json"; do
  p=$(measure profsh "$build/profsh" "$here/gpu_analyses_all.lua" "$trace")
  if [ "$skip_hta_1g" = "--skip-hta-1g" ] && [ "${trace##*/}" = kineto_1g.json ]; then
    h="- -"
  else
    h=$(measure hta /usr/bin/python3 "$here/hta_all.py" "$hta" "$trace")
  fi
  set -- $p $h
  awk -v name="${trace##*/}" -v ps="$1" -v pk="$2" -v hs="$3" -v hk="$4" 'BEGIN {
    if (hs == "-") { printf "%-60s %10.2f %10.0f %10s %10s %8s %8s\n", name, ps, pk / 1024, "-", "-", "-", "-"; exit }
    printf "%-60s %10.2f %10.0f %10.2f %10.0f %7.0fx %7.0fx\n", name, ps, pk / 1024, hs, hk / 1024,
           hs / (ps > 0.005 ? ps : 0.005), hk / pk }'
done
