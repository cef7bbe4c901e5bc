#!/bin/sh
# The critical path (t:critical_path) of one step and of every step: on the largest shared trace
# beside HTA's critical_path_analysis on the same single-rank step in the same run (the ratio
# printed), and on a synthetic job of RANKS ranks (tests/critical_path_ranks/make_job.py: STEPS
# steps of KERNELS kernels and an all-reduce each, one rank late) loaded with load_ranks, the
# ranks linked at their collectives. Wall time and peak memory per process (GNU time's %e, %M);
# each tool's own analysis time as it prints it.
#
#   bench/critical_path_bench.sh BUILD_DIR HTA_CHECKOUT [RANKS] [STEPS] [KERNELS]
set -e
build=$(cd "$1" && pwd)
hta=$2
ranks=${3:-64}
steps=${4:-10}
kernels=${5:-200}
here=$(cd "$(dirname "$0")" && pwd)
traces=${PROFSH_SHARED_TRACES:-$here/../../shared/traces}
trace="$traces/ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

measure() {  # label command...: prints the tool's own lines, then wall time and peak memory
  label=$1
  shift
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" > "$work/out" 2>&1 || { cat "$work/out"; exit 1; }
  grep -E '^(profsh|hta):' "$work/out" | sed 's/^/  /'
  set -- $(tail -1 "$work/time")
  printf "  %-34s %7.2f s wall %7.0f MB peak\n" "$label" "$1" "$(echo "$2 / 1024" | bc -l)"
}
seconds() {  # the analysis time a tool printed: "critical path S s"
  sed -n "s/^$1:.*critical path \([0-9.]*\) s.*/\1/p" "$work/out" | head -1
}

echo "$(basename "$trace") ($(du -h "$trace" | cut -f1)), ProfilerStep instance 1, $(nproc) cores"
measure "profsh (one step, every step)" "$build/profsh" "$here/critical_path.lua" "$trace"
profsh_s=$(seconds profsh)
measure "HTA (one step)" /usr/bin/python3 "$here/hta_critical_path.py" "$hta" "$trace" ProfilerStep 1
hta_s=$(seconds hta)
echo "  one step: HTA $hta_s s / profsh $profsh_s s = $(echo "$hta_s / $profsh_s" | bc -l | cut -c1-6)x"

/usr/bin/python3 "$here/../tests/critical_path_ranks/make_job.py" "$work/job" --ranks "$ranks" \
  --steps "$steps" --kernels "$kernels" --late-rank $((ranks - 1)) --late-us 500
echo "$ranks ranks x $steps steps x $kernels kernels ($(du -sh "$work/job" | cut -f1) of JSON)"
measure "profsh (one step, every step)" "$build/profsh" "$here/critical_path.lua" "$work/job"
