#!/bin/sh
# Flamegraphs of 100 thousand and 1 million unique stacks: profsh's time and peak memory beside
# flamegraph.pl's, on the same generated input, in the same run, and whether both draw the same
# frames with the same counts.
#   sh bench/flamegraph_bench.sh BUILD_DIR [WORK_DIR]
# flamegraph.pl is not part of profsh: it is taken from $FLAMEGRAPH_PL, else fetched from
# GitHub into WORK_DIR; without it only profsh's figures are printed. Needs GNU time
# (/usr/bin/time, Debian package "time"). flamegraph.pl needs about 8 GB and 3 minutes for the
# million stacks; set FLAMEGRAPH_SIZES="100000" to leave that out.
set -eu
build=$(cd "$1" && pwd)
work=${2:-/tmp/profsh-bench}
mkdir -p "$work"
here=$(cd "$(dirname "$0")" && pwd)
runs=${RUNS:-5}
sizes=${FLAMEGRAPH_SIZES:-"100000 1000000"}

pl=${FLAMEGRAPH_PL:-$work/flamegraph.pl}
if [ ! -f "$pl" ]; then
  url=https://raw.githubusercontent.com/brendangregg/FlameGraph/master/flamegraph.pl
  if command -v curl >/dev/null && curl -fsSL --max-time 60 -o "$pl.tmp" "$url"; then
    mv "$pl.tmp" "$pl"
  else
    rm -f "$pl.tmp"
    echo "flamegraph.pl could not be fetched from $url; set FLAMEGRAPH_PL=/path/to/flamegraph.pl"
    echo "to compare. Only profsh's figures follow."
    pl=""
  fi
fi

# "SECONDS MAX_RSS_KB" of one run of the command; its standard output goes to the file $1.
measure() {
  out=$1
  shift
  /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" >"$out" 2>"$work/stderr.txt" || {
    cat "$work/stderr.txt" >&2
    return 1
  }
  tail -n 1 "$work/time.txt"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for n in $sizes; do
  in="$work/stacks_$n.folded"
  [ -f "$in" ] || "$build/bench/gen_folded" "$in" "$n"
  echo "== $n unique stacks ($(du -m "$in" | cut -f1) MB folded)"
  : >"$work/profsh_runs.txt"
  i=0
  while [ $i -lt "$runs" ]; do
    measure /dev/null "$build/profsh" flamegraph "$in" --minwidth 0.1 -o "$work/profsh_$n.svg" >>"$work/profsh_runs.txt"
    i=$((i + 1))
  done
  p_time=$(cut -d' ' -f1 "$work/profsh_runs.txt" | median)
  p_rss=$(cut -d' ' -f2 "$work/profsh_runs.txt" | sort -n | tail -n 1)
  echo "profsh flamegraph: median ${p_time} s of $runs runs, peak RSS $((p_rss / 1024)) MB"
  if [ -n "$pl" ]; then
    # shellcheck disable=SC2046
    set -- $(measure "$work/flamegraph_pl_$n.svg" perl "$pl" "$in")
    echo "flamegraph.pl:     ${1} s (one run), peak RSS $(($2 / 1024)) MB"
    awk -v a="$1" -v b="$p_time" -v m="$2" -v r="$p_rss" \
      'BEGIN { printf "ratio: profsh %.0fx faster, %.1f%% of the memory\n", a / b, 100 * r / m }'
    python3 "$here/compare_flamegraphs.py" "$work/profsh_$n.svg" "$work/flamegraph_pl_$n.svg" || true
  fi
  echo
done
