#!/bin/sh
# Symbolisation time for the frames of a libtorch workload: profsh's symboliser
# (build/bench/symbols_bench) beside `perf report --stdio` and `perf script` on the same
# `perf record -g` data (user-space samples only, so both name the same frames). Medians.
# Then the unwinder beside perf's on `perf record --call-graph dwarf` samples of the same
# workload (build/bench/unwind_compare: the same stack copies, chains compared frame by frame).
#   sh bench/symbols_bench.sh BUILD_DIR [RUNS] [SECONDS]
set -eu
build=$(cd "$1" && pwd)
runs=${2:-5}
seconds=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
command -v perf >/dev/null || { echo "skipped: no perf (Debian's linux-perf)"; exit 0; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! perf record -q -e cpu-clock:u -F 999 -g -o "$work/perf.data" -- \
    /usr/bin/python3 "$here/symbols_torch_workload.py" "$seconds" >/dev/null 2>"$work/record.log"; then
  echo "skipped: perf record failed here: $(tail -n 1 "$work/record.log")"
  exit 0
fi
perf script -i "$work/perf.data" --show-mmap-events -F comm,pid,ip,sym,dso >"$work/script.txt" 2>/dev/null

# Median wall time in ms of a command run $runs times.
median_ms() {
  i=0
  : >"$work/times"
  while [ "$i" -lt "$runs" ]; do
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000000)) >>"$work/times"
    i=$((i + 1))
  done
  sort -n "$work/times" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'
}

echo "samples: $(perf report -i "$work/perf.data" --stdio 2>/dev/null | sed -n 's/^# Samples: *//p' | head -n 1)"
"$build/bench/symbols_bench" "$work/script.txt" "$runs"
echo "perf report --stdio (reads perf.data, names every frame, builds the call graph): $(median_ms perf report -i "$work/perf.data" --stdio) ms median of $runs"
echo "perf report --stdio -g none --sort dso,sym (no call graph): $(median_ms perf report -i "$work/perf.data" --stdio -g none --sort dso,sym) ms"
echo "perf script -F ip,sym,dso (names every frame, prints them): $(median_ms perf script -i "$work/perf.data" -F ip,sym,dso) ms"

if perf record -q -e cpu-clock:u -F 499 --call-graph dwarf,16384 -o "$work/dwarf.data" -- \
    /usr/bin/python3 "$here/symbols_torch_workload.py" 1 >/dev/null 2>"$work/record.log"; then
  perf script -i "$work/dwarf.data" --ns -F tid,time,ip,sym,dso >"$work/dwarf.txt" 2>/dev/null
  echo "unwinding, profsh beside perf on the same stack copies (--call-graph dwarf, 16 KB):"
  "$build/bench/unwind_compare" "$work/dwarf.data" "$work/dwarf.txt" | head -n 8
else
  echo "unwinding comparison skipped: perf record --call-graph dwarf failed: $(tail -n 1 "$work/record.log")"
fi
