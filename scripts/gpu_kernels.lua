-- What the GPU did: device time per operator and the kernels that took the longest, from a
-- Kineto trace recorded with ProfilerActivity.CUDA.
--   profsh scripts/gpu_kernels.lua [TRACE]
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or ".") .. "/common.lua")
local trace = common.trace_arg("alexnet_a100.pt.trace.json.gz")

local avgs = trace:key_averages()
print(avgs:table{sort_by = "cuda_time_total", row_limit = 10})

-- Device work is what kind says: kernels, copies and sets. gpu_user_annotation spans (kind
-- "annotation") also sit on the device but cover the work of a whole user range; counting
-- them would count that work twice.
local device_work = {kernel = true, copy = true, set = true}
local kernels = {}
for _, a in ipairs(avgs) do
  if device_work[a.kind] then kernels[#kernels + 1] = a end
end
table.sort(kernels, function(x, y) return x.self_cuda_time_total > y.self_cuda_time_total end)
local total = 0
for _, k in ipairs(kernels) do total = total + k.self_cuda_time_total end
print(string.format("%d distinct kernels, copies and sets, %.3f ms of device time", #kernels, total / 1000))
for i = 1, math.min(5, #kernels) do
  local k = kernels[i]
  print(string.format("  %6.2f%%  %-6s %12.3f us  x%-4d %s", 100 * k.self_cuda_time_total / total, k.kind,
                      k.self_cuda_time_total, k.count, k.key:sub(1, 80)))
end

-- Who launched the longest kernel: trace:launcher links a kernel to its CPU operator (and the
-- runtime call), whichever id convention the trace's Kineto used.
if kernels[1] then
  local longest
  for _, e in ipairs(trace:events{name = kernels[1].key}) do
    if not longest or e.dur > longest.dur then longest = e end
  end
  local op, call = trace:launcher(longest)
  print(string.format("the longest %s (%.3f us) was launched by %s through %s", longest.kind, longest.dur,
                      op and op.name or "an unknown operator", call and call.name or "an unknown call"))
end
