#!/bin/sh
# Load + every device-time analysis, profsh beside HTA on the same files in the same run: wall
# time and peak memory (GNU time's %e and %M). HTA runs from a checkout given as argument, with
# Debian's python3-pandas (see tests/gpu_analyses/hta_golden/README.md for its packages), at the
# lowest priority, under a wall-clock cap (HTA_TIMEOUT_S, 1200 s by default) and an address-space
# cap (HTA_VMEM_GB, 12 GB by default): a run stopped by either is printed as a lower bound
# ("> s", "> MB") with the stage it had reached.
#
#   bench/gpu_analyses_bench.sh BUILD_DIR HTA_CHECKOUT [WORK_DIR] [--skip-hta-1g]
set -e
build=$(cd "$1" && pwd)
hta=$2
work=${3:-/tmp/profsh_bench}
skip_hta_1g=${4:-}
hta_timeout=${HTA_TIMEOUT_S:-1200}
hta_vmem_gb=${HTA_VMEM_GB:-12}
here=$(cd "$(dirname "$0")" && pwd)
traces="$here/../../shared/traces"
mkdir -p "$work"
[ -f "$work/kineto_100m.json" ] || "$build/bench/gen_kineto_trace" "$work/kineto_100m.json" 100
[ -f "$work/kineto_1g.json" ] || "$build/bench/gen_kineto_trace" "$work/kineto_1g.json" 1024

# Prints "seconds peak_kB status": status is ok, failed, or, for a run stopped at a cap,
# time-cap-in-STAGE or memory-cap-in-STAGE with the stage it had reached.
measure() {  # label command...
  label=$1
  shift
  status=ok
  /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" > "$work/out.txt" 2>&1 || status=failed
  if [ $status = failed ]; then
    reached=$(sed -n 's/^stage: //p' "$work/out.txt" | tail -1)
    if grep -q "non-zero status 124" "$work/time.txt"; then
      status="time-cap-in-$reached"
    elif grep -q "MemoryError" "$work/out.txt"; then
      status="memory-cap-in-$reached"
    else
      echo "  ($label failed: $(tail -1 "$work/out.txt"))" >&2
    fi
  fi
  set -- $(tail -1 "$work/time.txt")
  echo "$1 $2 $status"
}

# HTA at the lowest priority, under both caps.
hta_capped() {  # trace
  measure hta sh -c 'ulimit -v "$1" && exec nice -n 19 timeout "$2" /usr/bin/python3 "$3" "$4" "$5"' \
    hta_capped $((hta_vmem_gb * 1024 * 1024)) "$hta_timeout" "$here/hta_all.py" "$hta" "$1"
}

echo "HTA capped at $hta_timeout s of wall time and $hta_vmem_gb GB of address space"
printf "%-60s %10s %10s %10s %10s %8s %8s  %s\n" trace "profsh s" "profsh MB" "HTA s" "HTA MB" speedup memory note
for trace in "$traces/ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz" \
             "$traces/nccl_parser_config_nccl_data.json.gz" \
             "$work/kineto_100m.json" "$work/kineto_1g.json"; do
  p=$(measure profsh "$build/profsh" "$here/gpu_analyses_all.lua" "$trace")
  if [ "$skip_hta_1g" = "--skip-hta-1g" ] && [ "${trace##*/}" = kineto_1g.json ]; then
    h="- - skipped"
  else
    h=$(hta_capped "$trace")
  fi
  set -- $p $h
  awk -v name="${trace##*/}" -v ps="$1" -v pk="$2" -v hs="$4" -v hk="$5" -v st="$6" 'BEGIN {
    if (st == "skipped") {
      printf "%-60s %10.2f %10.0f %10s %10s %8s %8s  %s\n", name, ps, pk / 1024, "-", "-", "-", "-", "HTA skipped"
      exit
    }
    capped = (st != "ok" && st != "failed")
    bound = capped ? "> " : ""
    note = st == "ok" ? "" : st == "failed" ? "HTA failed" : "HTA stopped: " st ", its figures are lower bounds"
    printf "%-60s %10.2f %10.0f %10s %10s %8s %8s  %s\n", name, ps, pk / 1024,
           bound sprintf("%.2f", hs), bound sprintf("%.0f", hk / 1024),
           bound sprintf("%.0fx", hs / (ps > 0.005 ? ps : 0.005)), bound sprintf("%.1fx", hk / pk), note }'
done
