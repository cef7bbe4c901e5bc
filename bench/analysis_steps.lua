-- One step of bench/analysis_before_after.sh: loads TRACE, runs the analysis STEP on it, and
-- prints the wall and CPU time of each ("bench: LOAD_S STEP_S LOAD_CPU_S STEP_CPU_S"; CPU time
-- counts both threads of a loop split in two, and is what a busy machine disturbs least). The script runs each step in a process
-- of its own, so that its peak memory is the load's and that step's alone.
--
--   profsh bench/analysis_steps.lua TRACE STEP [SCRATCH_DIR]
local path, step, scratch = arg[1], arg[2], arg[3] or "/tmp"

-- Lua has no wall clock finer than a second; date's costs the same few ms in every step.
local function now()
  local p = assert(io.popen("date +%s.%N"))
  local s = p:read("l")
  p:close()
  return tonumber(s)
end

local steps = {
  load = function() end,
  key_averages_table = function(t) return t:key_averages():table() end,
  kernel_table = function(t) return t:kernel_table() end,
  hta_temporal = function(t) return t:temporal_breakdown() end,
  hta_kernel_breakdown = function(t) return t:kernel_breakdown() end,
  hta_idle_time = function(t) return t:idle_time_breakdown() end,
  nsys_stats = function(t)
    local out = {}
    for _, report in ipairs{"cuda_gpu_kern_sum", "cuda_api_sum", "cuda_gpu_mem_time_sum",
                            "cuda_gpu_mem_size_sum", "nvtx_sum", "nvtx_kern_sum",
                            "nvtx_gpu_proj_sum"} do
      out[#out + 1] = t:stats(report)
    end
    return out
  end,
  compile = function(t) return {t:compile_regions(), t:graph_breaks()} end,
  diff_self = function(t) return profsh.diff(t, t) end,
  flamegraph = function(t) t:flamegraph(scratch .. "/analysis_steps.svg") end,
}

local run = steps[step]
if not run then
  local names = {}
  for name in pairs(steps) do names[#names + 1] = name end
  table.sort(names)
  error("unknown step '" .. tostring(step) .. "' (steps: " .. table.concat(names, ", ") .. ")")
end
-- What one reading of the clock adds to an interval: the least of a few, subtracted from each.
local cost = math.huge
for _ = 1, 3 do
  local a = now()
  cost = math.min(cost, now() - a)
end
local c0, t0 = os.clock(), now()
local t = profsh.load(path)
local c1, t1 = os.clock(), now()
local kept = run(t)
local c2, t2 = os.clock(), now()
assert(step == "load" or step == "flamegraph" or kept ~= nil, step .. " returned nothing")
print(string.format("bench: %.4f %.4f %.4f %.4f", math.max(0, t1 - t0 - cost),
                    math.max(0, t2 - t1 - cost), c1 - c0, c2 - c1))
