#!/bin/sh
# The cpu activity's cost: a fixed amount of CPU work (bench/fixed_work, 24 frames deep) timed
# plain, under `profsh run --activities nvtx` (the collector alone) and with cpu sampling at
# 999 Hz (perf_event_open, then the collector's timer fallback), and perf record beside it at the
# same rate (the peer), median of N runs each; then
# how fast profsh reads the samples back (unwinding and symbolising every one).
#   sh bench/cpu_sampling_bench.sh BUILD_DIR [RUNS]
set -eu
build=$(cd "$1" && pwd)
runs=${2:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
profsh="$build/profsh"
fixed="$build/bench/fixed_work"
iters=800  # about 1.3 s of one core here

median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
measure() {  # label, then the command prefix
  label=$1; shift
  i=0
  : > "$work/times"
  while [ $i -lt "$runs" ]; do
    "$@" "$fixed" $iters 2>/dev/null | tail -1 | cut -d' ' -f1 >> "$work/times"
    i=$((i + 1))
  done
  m=$(median < "$work/times")
  echo "$label: $m s of CPU (median of $runs)"
  echo "$m" > "$work/$(echo "$label" | tr ' ,=' '___')"
}

measure "plain"
measure "profsh nvtx" "$profsh" run --activities nvtx --no-table -o "$work/t.profsh" --
measure "profsh nvtx,cpu 999 Hz perf" "$profsh" run --activities nvtx,cpu --sample-rate 999 --no-table -o "$work/t.profsh" --
PROFSH_SAMPLE_DENY_PERF=1 measure "profsh nvtx,cpu 999 Hz timer" "$profsh" run --activities nvtx,cpu --sample-rate 999 --no-table -o "$work/t.profsh" --
# The peer: perf itself on the same work, the same event and rate, with the same 8 KB stack copy
# (--call-graph dwarf) and with frame pointers only (-g), measured against the plain runs.
if command -v perf >/dev/null 2>&1 && perf record -e cpu-clock -o "$work/probe.data" -- true >/dev/null 2>&1; then
  measure "perf record dwarf 8KB" perf record -e cpu-clock -F 999 --call-graph dwarf,8192 -o "$work/p.data" --
  measure "perf record fp" perf record -e cpu-clock -F 999 -g -o "$work/p.data" --
else
  echo "perf record cannot sample here: no peer figures"
fi
base=$(cat "$work/profsh_nvtx")
for m in perf timer; do
  t=$(cat "$work/profsh_nvtx_cpu_999_Hz_$m")
  awk -v a="$base" -v b="$t" -v m="$m" 'BEGIN {printf "slowdown of cpu sampling (%s) over the collector alone: %.2f %%\n", m, 100 * (b - a) / a}'
done
plain=$(cat "$work/plain")
for m in perf_record_dwarf_8KB perf_record_fp; do
  [ -f "$work/$m" ] || continue
  awk -v a="$plain" -v b="$(cat "$work/$m")" -v m="$m" 'BEGIN {gsub("_", " ", m); printf "slowdown of %s over the plain run: %.2f %%\n", m, 100 * (b - a) / a}'
done

# Reading back: a kept session folder loaded (unwinding and symbolising each sample).
"$profsh" run --activities cpu --sample-rate 999 --keep-session --no-table -o "$work/r.profsh" -- "$fixed" $iters 2> "$work/err" > /dev/null
folder=$(sed -n 's/.*streams kept in //p' "$work/err")
cat > "$work/load.lua" <<'LUA'
local t0 = os.clock()
local t = profsh.load(arg[1])
local dt = os.clock() - t0
local n = 0
for _, r in ipairs(t:hotspots{by = "module"}) do n = math.max(n, r.total) end
print(string.format("read back %d samples in %.3f s of CPU: %.0f samples/s (unwound and symbolised)", n, dt, n / dt))
LUA
"$profsh" "$work/load.lua" "$folder"
ls -l "$folder"/*.psamples | awk '{s += $5} END {printf "samples file: %.1f MB\n", s / 1e6}'
rm -rf "$folder"
