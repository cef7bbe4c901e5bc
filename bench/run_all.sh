#!/bin/sh
# Prints every figure of docs/PERFORMANCE.md, measured in one run on this machine.
#   sh bench/run_all.sh BUILD_DIR [WORK_DIR]
# Generated inputs (about 1.5 GB) go to WORK_DIR (default: a folder under /tmp), not the repo.
set -eu
build=$(cd "$1" && pwd)
work=${2:-/tmp/profsh-bench}
mkdir -p "$work"
here=$(cd "$(dirname "$0")" && pwd)

big="$work/kineto_1g.json"
small="$work/kineto_100m.json"
[ -f "$big" ] || "$build/bench/gen_kineto_trace" "$big" 1024
[ -f "$small" ] || "$build/bench/gen_kineto_trace" "$small" 100

echo "== import of Kineto JSON (1 GB), profsh vs Python json.load"
"$build/bench/import_bench" "$big" 5
echo "-- the same file cut at 70 % of its bytes (a killed writer's): every whole event kept"
cut="$work/kineto_1g_cut70.json"
[ -f "$cut" ] || head -c $(( $(wc -c < "$big") * 70 / 100 )) "$big" > "$cut"
"$build/bench/import_bench" "$cut" 5
python3 "$here/python_json_load.py" "$big"
echo
echo "== key_averages over 10 million events"
"$build/bench/key_averages_bench" 10 7
echo "-- what fresh pages cost here (the first run above pays for about 700 MB of them)"
"$build/bench/fresh_memory" 1024 3
echo
echo "== Chrome JSON export and profsh's own format (100 MB trace)"
"$build/bench/export_bench" "$small" 5
echo
echo "== flamegraphs of 100 thousand and 1 million unique stacks, profsh vs flamegraph.pl"
sh "$here/flamegraph_bench.sh" "$build" "$work"
echo
echo "== the collector: cost per range, sustained rate, bytes on disk"
sh "$here/collector_bench.sh" "$build"
echo
echo "== the cuda activity on the test CUDA driver: added time per launch, records/s decoded"
sh "$here/cuda_bench.sh" "$build"
echo
echo "== PyTorch: resnet18 inference unprofiled, under torch.profiler and under profsh run"
/usr/bin/python3 "$here/torch_overhead.py" "$build" 5
echo
echo "== PyTorch 2.6 (the Debian 13 root, when it can be made): both paths of profsh run"
if root=$("$here/../tests/torch2/debian13_root.sh" 2>/dev/null); then
  /usr/bin/python3 "$here/torch_overhead.py" "$build" 3 --fallback --wrap="$here/../tests/torch2/in_root.sh $root"
else
  echo "skipped: no Debian 13 root (tests/torch2/debian13_root.sh needs root and the network)"
fi
echo
echo "== a 64-rank job of 100 MB traces: profsh.load_ranks and per-rank analyses"
sh "$here/ranks_bench.sh" "$build" 64 100
echo
echo "== native stacks: symbolisation of a libtorch profile beside perf report; unwinding rate"
sh "$here/symbols_bench.sh" "$build"
"$build/bench/unwind_bench" 32 100000 5
echo
echo "== CPU samples: the workload's slowdown at 999 Hz; samples read back per second"
sh "$here/cpu_sampling_bench.sh" "$build" 5
echo
echo "== the release bundle beside the build tree: size; start-up of --version and of a load"
bundle=$(ls "$here"/../dist/profsh-*-linux-*.tar.gz 2>/dev/null | head -n 1)
if [ -n "$bundle" ]; then
  python3 "$here/bundle_bench.py" "$bundle" "$build"
else
  echo "skipped: no release bundle in dist/ (./build.sh dist makes it)"
fi
