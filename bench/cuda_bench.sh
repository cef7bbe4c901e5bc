#!/bin/sh
# The cuda activity on the test CUDA driver and CUPTI (tests/cuda_double; no GPU needed):
#   - added time per kernel launch: bench/cuda_launch bare, then under profsh run --activities
#     cuda (the test CUPTI's own work per record, a lock and a copy, is part of the difference:
#     on a GPU, CUPTI's is);
#   - records per second through the pipeline: the kept session loaded again by profsh.
#   sh bench/cuda_bench.sh BUILD_DIR [LAUNCHES]
set -eu
build=$(cd "$1" && pwd)
n=${2:-200000}
cupti="$build/tests/cuda_double/libcupti.so"
work=$(mktemp -d "${TMPDIR:-/tmp}/profsh-cuda-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "-- bare (the test driver without a tool)"
"$build/bench/cuda_launch" "$n"
echo "-- under profsh run --activities cuda"
"$build/profsh" run --activities cuda --cupti "$cupti" --no-table --keep-session \
  -o "$work/t.profsh" -- "$build/bench/cuda_launch" "$n" 2> "$work/err"
grep -E "GPU:|dropped|streams kept" "$work/err" | sed 's/^/   /'
session=$(sed -n 's/.*streams kept in //p' "$work/err")
cat > "$work/load.lua" <<'LUA'
local t0 = os.clock()
local t = profsh.load(arg[1])
local seconds = os.clock() - t0
local records = 0
for _, e in ipairs(t:events{limit = 10000000}) do
  if e.cat == "kernel" or e.cat == "cuda_driver" or e.cat == "cuda_runtime" then records = records + 1 end
end
print(string.format("decoded %d GPU records in %.3f s: %.2f M records/s (with the session's other blocks)",
                    records, seconds, records / seconds / 1e6))
LUA
"$build/profsh" "$work/load.lua" "$session"
rm -rf "$session"
