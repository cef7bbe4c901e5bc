#!/bin/sh
# Fuzzes every reader with libFuzzer under AddressSanitizer and UndefinedBehaviorSanitizer, and
# prints the executions each target ran, its coverage, and what it found.
#   sh bench/fuzz.sh [SECONDS per target, default 60] [TARGET...]
# Builds build-fuzz with clang (Debian's clang and libclang-rt-dev). Each run starts from the
# committed corpus, the repo's traces and the crashes found before (tests/fuzz/), with a
# dictionary, 2 GB of memory and 30 s of wall time per input (a hang is a finding; inputs here
# take under a second, so a longer one on a loaded machine is starved of CPU, not hung). New
# inputs go to a scratch corpus, a crash to tests/fuzz/crashes/TARGET/ (commit it: the test
# suite replays that folder).
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
seconds=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-trace_reader stream_decoder folded_stacks roundtrip sql proc_maps elf_symbols samples_file}
build="$root/build-fuzz"
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPROFSH_FUZZ=ON -DPROFSH_SANITIZE=ON -DPROFSH_BUILD_BENCHMARKS=OFF >/dev/null
for t in $targets; do
  cmake --build "$build" -j "$(nproc)" --target "fuzz_$t" >/dev/null
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-16s %14s %10s %8s %s\n' target executions "exec/s" coverage result
for t in $targets; do
  dict="$root/tests/fuzz/json.dict"
  case $t in stream_decoder | samples_file) dict="$root/tests/fuzz/stream.dict" ;; esac
  [ "$t" = folded_stacks ] && dict=""
  [ "$t" = proc_maps ] && dict=""
  [ "$t" = elf_symbols ] && dict=""
  seeds="$root/tests/fuzz/corpus/$t $root/tests/fuzz/crashes/$t"
  # Whole traces are replayed by the test suite; fuzzing starts from small ones (a 54 MB input
  # costs ~10 ms, a 30 KB slice of it ~0.1 ms), and inputs stay under 64 KB.
  max_len=65536
  case $t in trace_reader | roundtrip | sql) seeds="$seeds $root/tests/fuzz/corpus/kineto_slices $root/tests/golden/cases/*" ;; esac
  mkdir -p "$work/$t"
  status=0
  # shellcheck disable=SC2086
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$build/tests/fuzz/fuzz_$t" "$work/$t" $seeds ${dict:+-dict=$dict} \
    -max_total_time="$seconds" -max_len="$max_len" -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$root/tests/fuzz/crashes/$t/" >"$work/$t.log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log" | tail -n 1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/$t.log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$work/$t.log" | tail -n 1 | cut -d' ' -f2)
  if [ "$status" -eq 0 ]; then result="no crash, leak or hang"; else
    result="FOUND (exit $status): $(grep -m1 -E 'ERROR|runtime error|Timeout|out-of-memory' "$work/$t.log" || echo see log)"
    cp "$work/$t.log" "$root/tests/fuzz/crashes/$t/last_run.log"
  fi
  printf '%-16s %14s %10s %8s %s\n' "$t" "${runs:-?}" "${speed:-?}" "${cov:-?}" "$result"
done
