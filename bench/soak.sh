#!/bin/sh
# A long job under a repeating schedule (10 minutes by default): profsh's and the workload's
# resident memory printed every minute (it must stay flat), then the per-event cost outside the
# schedule's windows next to the cost with no tool.
#   sh bench/soak.sh BUILD_DIR [MINUTES]
set -eu
build=$(cd "$1" && pwd)
minutes=${2:-10}
here=$(cd "$(dirname "$0")" && pwd)
"$build/profsh" "$here/soak.lua" "$minutes"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
: >"$work/plain" && : >"$work/idle"
for i in 1 2 3 4 5; do
  "$build/bench/collector_overhead" nvtx 50000 15 >>"$work/plain"
  # A schedule whose windows never come: every event is outside them.
  "$build/profsh" run --no-table -o "$work/t.profsh" --schedule skip_first=1000000000 --step-marker '^never$' -- \
    "$build/bench/collector_overhead" nvtx 50000 15 >>"$work/idle" 2>/dev/null
done
echo "outside windows: $(median <"$work/idle") ns per NVTX push+pop pair; $(median <"$work/plain") ns with no tool (medians of 5 runs)"
