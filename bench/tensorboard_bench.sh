#!/bin/sh
# Every TensorBoard view, profsh beside the plugin's own parser (RunLoader, kineto 041e7ce, run
# through tests/tensorboard/tb_harness.py) on the same files in the same run: wall time and peak
# memory (GNU time's %e and %M), and their ratios. The plugin runs at the lowest priority under
# a wall-clock cap (TB_TIMEOUT_S, 1800 s by default); a run it does not finish is printed as a
# lower bound.
#
#   bench/tensorboard_bench.sh BUILD_DIR [WORK_DIR] [SIZE_MB]   (synthetic trace, 1024 by default)
set -e
build=$(cd "$1" && pwd)
work=${2:-/tmp/profsh_tb_bench}
size=${3:-1024}
timeout_s=${TB_TIMEOUT_S:-1800}
here=$(cd "$(dirname "$0")" && pwd)
traces="$here/../tests/data/kineto"
mkdir -p "$work"
synthetic="$work/kineto_${size}m.json"
[ -f "$synthetic" ] || "$build/bench/gen_kineto_trace" "$synthetic" "$size"

measure() {  # command... -> "seconds peak_kB status"
  status=ok
  /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" > "$work/out.txt" 2>&1 || status=failed
  if [ $status = failed ] && grep -q "non-zero status 124" "$work/time.txt"; then status=capped; fi
  [ $status = failed ] && echo "  (failed: $(tail -1 "$work/out.txt"))" >&2
  set -- $(tail -1 "$work/time.txt")
  echo "$1 $2 $status"
}

printf "%-62s %9s %10s %9s %10s %8s %8s  %s\n" trace "profsh s" "profsh MB" "plugin s" "plugin MB" speedup memory note
for trace in "$traces/ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz" "$synthetic"; do
  p=$(measure "$build/profsh" "$here/tensorboard_all.lua" "$trace")
  h=$(measure nice -n 19 timeout "$timeout_s" /usr/bin/python3 "$here/tb_plugin_load.py" "$trace")
  set -- $p $h
  awk -v name="${trace##*/}" -v ps="$1" -v pk="$2" -v pst="$3" -v hs="$4" -v hk="$5" -v st="$6" 'BEGIN {
    bound = st == "capped" ? "> " : ""
    note = (pst != "ok" ? "profsh " pst " " : "") (st == "ok" ? "" : "plugin " st)
    printf "%-62s %9.2f %10.0f %9s %10s %8s %8s  %s\n", name, ps, pk / 1024,
           bound sprintf("%.2f", hs), bound sprintf("%.0f", hk / 1024),
           bound sprintf("%.0fx", hs / (ps > 0.005 ? ps : 0.005)), bound sprintf("%.1fx", hk / pk), note }'
done
