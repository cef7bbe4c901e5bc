#!/bin/sh
# Two profsh binaries side by side (before and after a change, in one run) on the largest shared
# trace and on a synthetic Kineto trace of SIZE_MB: the load, then each analysis (torch's
# key_averages table, PyProf's kernel table, HTA's temporal, kernel and idle time breakdowns,
# nsys' stats reports, torch.compile's regions and graph breaks, the diff of the trace against
# itself, a flamegraph). Each step is a process of its own (bench/analysis_steps.lua: load, then
# the step), so that its peak resident memory (GNU time's %M) is the load's and that step's. The
# binaries alternate, which goes first alternating too, for ROUNDS rounds; the table has each
# step's median wall time (the load's, or the step's alone, measured inside the process), median
# peak memory, and median CPU time (what a busy machine disturbs least), and the import speed
# of each binary follows it.
#
#   bench/analysis_before_after.sh OLD_PROFSH NEW_PROFSH
#
# ROUNDS (default 3); SIZE_MB of the synthetic trace (default 1024); PROFSH_BENCH_TMP, where the
# synthetic trace is written once and reused (default /tmp/profsh-bench, as bench/run_all.sh);
# GEN_KINETO_TRACE, its generator (default: bench/gen_kineto_trace of NEW_PROFSH's build);
# STEPS, a space-separated subset of the steps; TRACES_DIR, the shared traces (default
# ../shared/traces beside the checkout, as the other benchmarks).
set -eu
[ $# -eq 2 ] || {
  echo "usage: $0 OLD_PROFSH NEW_PROFSH" >&2
  exit 2
}
old=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
new=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
for bin in "$old" "$new"; do
  [ -x "$bin" ] || {
    echo "$0: $bin is not an executable profsh" >&2
    exit 2
  }
done
rounds=${ROUNDS:-3}
size_mb=${SIZE_MB:-1024}
work=${PROFSH_BENCH_TMP:-/tmp/profsh-bench}
gen=${GEN_KINETO_TRACE:-$(dirname "$new")/bench/gen_kineto_trace}
steps=${STEPS:-load key_averages_table kernel_table hta_temporal hta_kernel_breakdown hta_idle_time nsys_stats compile diff_self flamegraph}
here=$(cd "$(dirname "$0")" && pwd)
traces=${TRACES_DIR:-$here/../../shared/traces}
mkdir -p "$work"

shared=$(ls -S "$traces"/*.json "$traces"/*.json.gz 2>/dev/null | head -1 || true)
[ -n "$shared" ] || {
  echo "$0: no trace in $traces" >&2
  exit 1
}
if [ "$size_mb" = 1024 ]; then
  synthetic="$work/kineto_1g.json"  # the name bench/run_all.sh gives it
else
  synthetic="$work/kineto_${size_mb}m.json"
fi
if [ ! -f "$synthetic" ]; then
  [ -x "$gen" ] || {
    echo "$0: no generator at $gen (cmake --build build --target gen_kineto_trace, or set GEN_KINETO_TRACE)" >&2
    exit 1
  }
  "$gen" "$synthetic.part" "$size_mb" >&2
  mv "$synthetic.part" "$synthetic"
fi

# Bytes of JSON each trace holds, for the import speed.
json_bytes() {
  case $1 in
    *.gz) gzip -dc "$1" | wc -c ;;
    *) wc -c < "$1" ;;
  esac
}

results="$work/analysis_before_after.txt"
: > "$results"
out="$work/analysis_step.out"
times="$work/analysis_step.time"
# Appends "TRACE STEP WHICH SECONDS PEAK_KB CPU_SECONDS" for one step of one binary.
measure() {  # label trace step which binary
  if ! /usr/bin/time -f "%e %M" -o "$times" "$5" "$here/analysis_steps.lua" "$2" "$3" "$work" \
      > "$out" 2>&1; then
    echo "$0: $5 failed on $3 of $2:" >&2
    tail -5 "$out" >&2
    exit 1
  fi
  set -- "$1" "$3" "$4" $(sed -n 's/^bench: //p' "$out") $(tail -1 "$times")
  # $4, $5: load and step seconds; $6, $7: their CPU seconds; $8: process seconds; $9: peak kB
  if [ "$2" = load ]; then echo "$1 $2 $3 $4 $9 $6"; else echo "$1 $2 $3 $5 $9 $7"; fi >> "$results"
}

round=1
while [ "$round" -le "$rounds" ]; do
  echo "round $round of $rounds" >&2
  for step in $steps; do
    for label in shared synthetic; do
      if [ $label = shared ]; then trace=$shared; else trace=$synthetic; fi
      if [ $((round % 2)) = 1 ]; then
        measure $label "$trace" "$step" old "$old"
        measure $label "$trace" "$step" new "$new"
      else
        measure $label "$trace" "$step" new "$new"
        measure $label "$trace" "$step" old "$old"
      fi
    done
  done
  round=$((round + 1))
done

echo "old: $old"
echo "new: $new"
echo "shared: $shared ($(json_bytes "$shared") bytes of JSON)"
echo "synthetic: $synthetic ($(json_bytes "$synthetic") bytes)"
echo "$rounds rounds, medians; a step's time excludes the load, its peak memory includes it"
shared_bytes=$(json_bytes "$shared")
synthetic_bytes=$(json_bytes "$synthetic")
awk -v steps="$steps" -v sb="$shared_bytes" -v yb="$synthetic_bytes" '
function median(key,    n, i, j, t, v) {
  n = count[key]
  for (i = 1; i <= n; i++) v[i] = value[key, i]
  for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
  return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
{
  k = $1 SUBSEP $2 SUBSEP $3
  count[k]++; value[k, count[k]] = $4
  m = k SUBSEP "kb"; count[m]++; value[m, count[m]] = $5
  m = k SUBSEP "cpu"; count[m]++; value[m, count[m]] = $6
}
END {
  printf "%-32s %12s %12s %7s %16s %16s %10s %10s\n", "step", "old median s", "new median s", "ratio",
         "old peak RSS MB", "new peak RSS MB", "old cpu s", "new cpu s"
  n = split(steps, list, " ")
  split("shared synthetic", labels, " ")
  for (l = 1; l <= 2; l++) for (s = 1; s <= n; s++) {
    o = labels[l] SUBSEP list[s] SUBSEP "old"; w = labels[l] SUBSEP list[s] SUBSEP "new"
    if (!count[o]) continue
    os = median(o); ns = median(w)
    printf "%-32s %12.3f %12.3f %7s %16.0f %16.0f %10.3f %10.3f\n", labels[l] "/" list[s], os, ns,
           (os > 0 ? sprintf("%.2f", ns / os) : "-"), median(o SUBSEP "kb") / 1024, median(w SUBSEP "kb") / 1024,
           median(o SUBSEP "cpu"), median(w SUBSEP "cpu")
    if (list[s] == "load") {
      speed[labels[l], "old"] = os; speed[labels[l], "new"] = ns
      cpu[labels[l], "old"] = median(o SUBSEP "cpu"); cpu[labels[l], "new"] = median(w SUBSEP "cpu")
    }
  }
  for (l = 1; l <= 2; l++) {
    bytes = labels[l] == "shared" ? sb : yb
    if (speed[labels[l], "old"] > 0 && speed[labels[l], "new"] > 0)
      printf "import of %s: old %.0f MB/s, new %.0f MB/s of wall time; old %.0f MB/s, new %.0f MB/s of CPU time\n",
             labels[l], bytes / 1e6 / speed[labels[l], "old"], bytes / 1e6 / speed[labels[l], "new"],
             bytes / 1e6 / cpu[labels[l], "old"], bytes / 1e6 / cpu[labels[l], "new"]
  }
}' "$results"
