#!/bin/sh
# A job of RANKS synthetic rank traces of SIZE_MB each (bench/gen_kineto_trace, one seed per
# rank, named rank-N.json) loaded with profsh.load_ranks and analysed (per-rank temporal
# breakdown, its cross-rank view, collectives): wall time and peak memory (GNU time's %e and %M).
# With an HTA checkout, HTA's TraceAnalysis loads the first HTA_RANKS of them (default 4: HTA
# needs about 5x a trace's size in memory per rank, so 64 x 100 MB does not fit in this
# machine's 24 GB) and runs its temporal breakdown, beside profsh on the same files.
#
#   bench/ranks_bench.sh BUILD_DIR [RANKS] [SIZE_MB] [HTA_CHECKOUT]
set -e
build=$(cd "$1" && pwd)
ranks=${2:-64}
size=${3:-100}
hta=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/all" "$work/few"
r=0
while [ "$r" -lt "$ranks" ]; do
  "$build/bench/gen_kineto_trace" "$work/all/rank-$r.json" "$size" "$((r + 1))" "$r" 2>/dev/null
  if [ "$r" -lt "${HTA_RANKS:-4}" ]; then ln -s "$work/all/rank-$r.json" "$work/few/rank-$r.json"; fi
  r=$((r + 1))
done
cat > "$work/job.lua" <<'LUA'
local t = profsh.load_ranks(...)
local breakdown = t:temporal_breakdown()
local across = breakdown:across_ranks()
local c = t:collectives()
print(string.format("profsh: %d ranks, %d events, %d temporal rows, %d cross-rank rows, %d collective calls",
                    #t.ranks, t.event_count, #breakdown, #across, #c))
LUA
times="$work/times"
measure() {  # label command...
  label=$1
  shift
  /usr/bin/time -f "%e %M" -o "$times" "$@" > "$work/out" 2>&1 || { cat "$work/out"; exit 1; }
  set -- $(tail -1 "$times")
  printf "%-28s %7.2f s %7.0f MB   %s\n" "$label" "$1" "$(echo "$2 / 1024" | bc -l)" "$(grep -E '^(profsh|hta):' "$work/out" | tail -1)"
}
echo "$ranks ranks x $size MB ($(du -sh "$work/all" | cut -f1) of JSON), $(nproc) cores"
measure "profsh, all $ranks ranks" "$build/profsh" "$work/job.lua" "$work/all"
if [ -n "$hta" ]; then
  n=$(ls "$work/few" | wc -l)
  measure "profsh, $n ranks" "$build/profsh" "$work/job.lua" "$work/few"
  measure "HTA, $n ranks" nice -n "${HTA_NICE:-0}" /usr/bin/python3 "$here/hta_ranks.py" "$hta" $(ls "$work/few"/rank-*.json | sort -V)
fi
