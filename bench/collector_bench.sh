#!/bin/sh
# The collector's figures, measured side by side in one run:
#   - ns per NVTX push+pop pair and per ITT task begin+end pair, with profsh attached and with
#     no tool (the same binary, the same loop), medians over interleaved repetitions, beside
#     what two TSC reads (a pair's clock floor) cost in the same runs;
#   - what one TSC read costs here (the floor: two per pair);
#   - events per second recorded from one thread pushing as fast as it can, what was dropped,
#     and the CPU time the drain thread and the producer spent per recorded event (medians of
#     REPS runs): on a shared machine the CPU times say whether the drain can keep up;
#   - sustained events per second written to the stream with 2 threads pushing as fast as
#     they can, and the bytes each range takes on disk.
#   [REPS=5] [PROFSH_COLLECTOR=other/libprofsh_collector.so] sh bench/collector_bench.sh BUILD_DIR
# (PROFSH_COLLECTOR measures another build of the collector with this build's bench and profsh.)
set -eu
build=$(cd "$1" && pwd)
bin="$build/bench/collector_overhead"
profsh="$build/profsh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
reps=${REPS:-5}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for api in nvtx itt; do
  : >"$work/plain" && : >"$work/attached" && : >"$work/floor"
  i=0
  while [ $i -lt "$reps" ]; do
    "$bin" "$api" 50000 15 | cut -d' ' -f1 >>"$work/plain"
    "$profsh" run --no-table -o "$work/t.profsh" -- "$bin" "$api" 50000 15 >"$work/out" 2>"$work/summary"
    cut -d' ' -f1 <"$work/out" >>"$work/attached"
    cut -d' ' -f2 <"$work/out" >>"$work/floor"
    grep -q "nothing dropped" "$work/summary" || { echo "events were dropped while measuring:"; cat "$work/summary"; }
    i=$((i + 1))
  done
  plain=$(median <"$work/plain")
  attached=$(median <"$work/attached")
  floor=$(median <"$work/floor")
  echo "$api pair: $attached ns with profsh attached, two TSC reads $floor ns in the same runs" \
    "(+$(awk -v a="$attached" -v f="$floor" 'BEGIN { printf "%.2f", a - f }') ns)," \
    "$plain ns with no tool (medians of $reps runs x 15 rounds of 50000 pairs)"
done
set -- $("$bin" clock)
echo "clock: one TSC read costs $1 ns here, clock_gettime(CLOCK_MONOTONIC) $2 ns (a pair takes two TSC reads)"

: >"$work/single"
i=0
while [ $i -lt "$reps" ]; do
  "$profsh" run --no-table -o "$work/s.profsh" -- "$bin" stress 1 20000000 >"$work/elapsed" 2>"$work/summary"
  ranges=$(sed -n 's/.* \([0-9]*\) ranges, .*/\1/p' "$work/summary" | head -n 1)
  dropped=$(sed -n 's/.*; \([0-9]*\) ranges and .* dropped/\1/p' "$work/summary")
  # Per run: M events/s recorded and pushed (wall clock), ranges dropped, and the CPU ns per
  # recorded event of the drain thread and of the producer.
  echo "$ranges ${dropped:-0} $(cat "$work/elapsed")" |
    awk '{ printf "%.2f %.2f %d %.2f %.2f\n", 2 * $1 / $3 / 1e6, 2 * ($1 + $2) / $3 / 1e6, $2,
           $4 * 1e9 / (2 * $1), $5 * 1e9 / (2 * $1) }' >>"$work/single"
  i=$((i + 1))
done
recorded=$(cut -d' ' -f1 "$work/single" | median)
offered=$(cut -d' ' -f2 "$work/single" | median)
drops=$(cut -d' ' -f3 "$work/single" | median)
drain_cpu=$(cut -d' ' -f4 "$work/single" | median)
producer_cpu=$(cut -d' ' -f5 "$work/single" | median)
echo "single producer: $recorded M events/s recorded of $offered M events/s pushed," \
  "$drops ranges dropped (medians of $reps runs of 20000000 pairs; drops per run:" \
  "$(cut -d' ' -f3 "$work/single" | tr '\n' ' ' | sed 's/ $//'))"
echo "single producer CPU: the drain thread $drain_cpu ns per recorded event, the producer" \
  "$producer_cpu ns (medians): the drain keeps up whenever it gets as much CPU as the producer"

"$profsh" run --no-table -o "$work/s.profsh" -- "$bin" stress 2 20000000 >"$work/elapsed" 2>"$work/summary"
elapsed=$(cut -d' ' -f1 "$work/elapsed")
ranges=$(sed -n 's/.* \([0-9]*\) ranges, .*/\1/p' "$work/summary" | head -n 1)
dropped=$(sed -n 's/.*; \([0-9]*\) ranges and .* dropped/\1/p' "$work/summary")
dropped=${dropped:-0}
awk -v r="$ranges" -v d="$dropped" -v s="$elapsed" 'BEGIN {
  printf "sustained: 2 threads, %d ranges in %.2f s: %.1f M events/s written (%d ranges dropped, %.1f%%)\n",
         r + d, s, 2 * r / s / 1e6, d, 100 * d / (r + d) }'
"$profsh" run --no-table -o "$work/b.profsh" -- "$bin" nvtx 50000 15 >/dev/null 2>"$work/summary"
sed -n 's/.* \([0-9]*\) ranges, .*; \([0-9]*\) bytes of streams.*/\1 \2/p' "$work/summary" |
  awk '{ printf "on disk: %.2f bytes per range (%d ranges, %d bytes of stream, names interned)\n", $2 / $1, $1, $2 }'
