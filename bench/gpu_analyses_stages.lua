-- Where the memory of bench/gpu_analyses_all.lua goes: the process's resident memory (VmRSS),
-- its peak so far (VmHWM) and Lua's heap after the load and after each analysis, every result
-- kept as the benchmark keeps them.
--
--   profsh bench/gpu_analyses_stages.lua TRACE
local function report(stage)
  local f = assert(io.open("/proc/self/status"))
  local status = f:read("a")
  f:close()
  local rss = tonumber(status:match("VmRSS:%s+(%d+)"))
  local peak = tonumber(status:match("VmHWM:%s+(%d+)"))
  print(string.format("%-20s resident %7.1f MB   peak %7.1f MB   Lua heap %7.1f MB", stage,
                      rss / 1024, peak / 1024, collectgarbage("count") / 1024))
end

report("start")
local t = profsh.load(arg[1])
report("load")
local temporal = t:temporal_breakdown()
report("temporal")
local by_type, by_kernel = t:kernel_breakdown()
report("kernel_breakdown")
local idle, stats = t:idle_time_breakdown()
report("idle_time")
local overlap = t:comm_comp_overlap()
report("comm_comp_overlap")
local launches = t:kernel_launch_stats()
report("kernel_launch_stats")
local annotations = t:annotation_breakdown()
report("annotation")
print(string.format("%d launches (%d short kernels, %d long launches, %d long delays), %d aten op rows",
                    #launches, #launches.short_kernels, #launches.long_launches,
                    #launches.long_delays, #launches.aten_op_delays))
