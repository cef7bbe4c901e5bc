#!/bin/sh
# The collector's figures, measured side by side in one run:
#   - ns per NVTX push+pop pair and per ITT task begin+end pair, with profsh attached and with
#     no tool (the same binary, the same loop), medians over interleaved repetitions;
#   - what one TSC read costs here (the floor: two per pair);
#   - sustained events per second written to the stream with 2 threads pushing as fast as
#     they can, and the bytes each range takes on disk.
#   sh bench/collector_bench.sh BUILD_DIR
set -eu
build=$(cd "$1" && pwd)
bin="$build/bench/collector_overhead"
profsh="$build/profsh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
reps=${REPS:-5}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for api in nvtx itt; do
  : >"$work/plain" && : >"$work/attached"
  i=0
  while [ $i -lt "$reps" ]; do
    "$bin" "$api" 50000 15 >>"$work/plain"
    "$profsh" run --no-table -o "$work/t.profsh" -- "$bin" "$api" 50000 15 >>"$work/attached" 2>"$work/summary"
    grep -q "nothing dropped" "$work/summary" || { echo "events were dropped while measuring:"; cat "$work/summary"; }
    i=$((i + 1))
  done
  plain=$(median <"$work/plain")
  attached=$(median <"$work/attached")
  echo "$api pair: $attached ns with profsh attached, $plain ns with no tool (medians of $reps runs x 15 rounds of 50000 pairs)"
done
set -- $("$bin" clock)
echo "clock: one TSC read costs $1 ns here, clock_gettime(CLOCK_MONOTONIC) $2 ns (a pair takes two TSC reads)"

"$profsh" run --no-table -o "$work/s.profsh" -- "$bin" stress 2 20000000 >"$work/elapsed" 2>"$work/summary"
elapsed=$(cat "$work/elapsed")
ranges=$(sed -n 's/.* \([0-9]*\) ranges, .*/\1/p' "$work/summary" | head -n 1)
dropped=$(sed -n 's/.*; \([0-9]*\) ranges and .* dropped/\1/p' "$work/summary")
dropped=${dropped:-0}
awk -v r="$ranges" -v d="$dropped" -v s="$elapsed" 'BEGIN {
  printf "sustained: 2 threads, %d ranges in %.2f s: %.1f M events/s written (%d ranges dropped, %.1f%%)\n",
         r + d, s, 2 * r / s / 1e6, d, 100 * d / (r + d) }'
"$profsh" run --no-table -o "$work/b.profsh" -- "$bin" nvtx 50000 15 >/dev/null 2>"$work/summary"
sed -n 's/.* \([0-9]*\) ranges, .*; \([0-9]*\) bytes of streams.*/\1 \2/p' "$work/summary" |
  awk '{ printf "on disk: %.2f bytes per range (%d ranges, %d bytes of stream, names interned)\n", $2 / $1, $1, $2 }'
