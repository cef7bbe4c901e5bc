#!/bin/sh
# The collector's figures, measured side by side in one run:
#   - ns per NVTX push+pop pair and per ITT task begin+end pair, with profsh attached and with
#     no tool (the same binary, the same loop, runs interleaved), beside what two TSC reads (a
#     pair's clock floor) cost in the same rounds, for two lengths of loop:
#       short: rounds of 50 000 pairs, 60 ms apart (15 a run): the drain thread sleeps through
#              the round (it stays under the quarter ring that wakes it) and drains between;
#       long:  loops of LONG_PAIRS (3 000 000) pairs, 60 ms apart (7 a run): the drain is woken
#              every quarter ring and encodes beside the loop, as in a long job;
#     each as the median over runs of each run's median and best round, and the median
#     difference in thread CPU time (what preemption on a shared machine leaves out);
#   - what one TSC read costs here (the floor: two per pair);
#   - events per second recorded from one thread pushing as fast as it can, what was dropped,
#     and the CPU time the drain thread and the producer spent per recorded event (medians of
#     REPS runs): on a shared machine the CPU times say whether the drain can keep up;
#   - sustained events per second written to the stream with 2 threads pushing as fast as
#     they can, and the bytes each range takes on disk.
#   [REPS=5] [LONG_PAIRS=3000000] [PROFSH_COLLECTOR=other/libprofsh_collector.so]
#     sh bench/collector_bench.sh BUILD_DIR
# (PROFSH_COLLECTOR measures another build of the collector with this build's bench and profsh.)
set -eu
build=$(cd "$1" && pwd)
bin="$build/bench/collector_overhead"
profsh="$build/profsh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
reps=${REPS:-5}
long_pairs=${LONG_PAIRS:-3000000}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# The median of column $1 of file $2; over: of the difference of columns $1 - $3, signed.
col() { awk -v a="$1" '{ print $a }' "$2" | median; }
over() { awk -v a="$1" -v b="$3" '{ print $a - $b }' "$2" | median | awk '{ printf "%+.2f", $1 }'; }

# One loop length: "API PAIRS ROUNDS LABEL". collector_overhead prints, per run: median pair,
# median floor, best pair, best floor, median pair CPU, median floor CPU (ns per pair).
measure() {
  api=$1 pairs=$2 rounds=$3 label=$4
  : >"$work/plain" && : >"$work/attached" && : >"$work/drops"
  i=0
  while [ $i -lt "$reps" ]; do
    "$bin" "$api" "$pairs" "$rounds" >>"$work/plain"
    "$profsh" run --no-table -o "$work/t.profsh" -- "$bin" "$api" "$pairs" "$rounds" >>"$work/attached" 2>"$work/summary"
    # A dropped push costs less than a recorded one: a figure with drops is said to have them.
    dropped=$(sed -n 's/.*; \([0-9]*\) ranges and .* dropped/\1/p' "$work/summary")
    echo "${dropped:-0}" >>"$work/drops"
    i=$((i + 1))
  done
  dropped=$(awk '{ s += $1 } END { print s + 0 }' "$work/drops")
  echo "$api, $label:"
  echo "  median round: two TSC reads $(col 2 "$work/attached") ns, no tool $(col 1 "$work/plain") ns," \
    "profsh attached $(col 1 "$work/attached") ns: $(over 1 "$work/attached" 2) ns over the two reads"
  echo "  best round:   two TSC reads $(col 4 "$work/attached") ns, no tool $(col 3 "$work/plain") ns," \
    "profsh attached $(col 3 "$work/attached") ns: $(over 3 "$work/attached" 4) ns"
  echo "  thread CPU time, median round: $(over 5 "$work/attached" 6) ns over the two reads;" \
    "$([ "$dropped" = 0 ] && echo "nothing dropped" || echo "$dropped ranges DROPPED (a dropped range takes the general path: not the cost of recording)")" \
    "(medians of $reps runs)"
}

for api in nvtx itt; do
  measure "$api" 50000 15 "short rounds (15 rounds of 50000 pairs a run, the drain asleep)"
  measure "$api" "$long_pairs" 7 "long loops (7 loops of $long_pairs pairs a run, the drain beside them)"
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
