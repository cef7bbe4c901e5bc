-- What the GPU did: device time per operator and the kernels that took the longest, from a
-- Kineto trace recorded with ProfilerActivity.CUDA.
--   profsh scripts/gpu_kernels.lua [TRACE]
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or ".") .. "/common.lua")
local trace = common.trace_arg("alexnet_a100.pt.trace.json.gz")

local avgs = trace:key_averages()
print(avgs:table{sort_by = "cuda_time_total", row_limit = 10})

local kernels = {}
for _, a in ipairs(avgs) do
  if a.device_type == "CUDA" then kernels[#kernels + 1] = a end
end
table.sort(kernels, function(x, y) return x.self_cuda_time_total > y.self_cuda_time_total end)
local total = 0
for _, k in ipairs(kernels) do total = total + k.self_cuda_time_total end
print(string.format("%d distinct kernels/copies, %.3f ms of device time", #kernels, total / 1000))
for i = 1, math.min(5, #kernels) do
  local k = kernels[i]
  print(string.format("  %6.2f%%  %9.3f us  x%-4d %s", 100 * k.self_cuda_time_total / total,
                      k.self_cuda_time_total, k.count, k.key:sub(1, 80)))
end
