-- Soak: the bundled NVTX sample runs for MINUTES under a repeating schedule; every window goes to
-- a handler that looks at it and lets it go. Prints, once a minute, the peak and current resident
-- memory of profsh and of the workload, which must stay flat.
--   profsh bench/soak.lua [MINUTES]
local minutes = tonumber(arg and arg[1]) or 10
local function status_kb(pid, field)
  local f = io.open("/proc/" .. pid .. "/status")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return tonumber(text:match(field .. ":%s+(%d+) kB"))
end
local self_pid = tonumber(io.open("/proc/self/stat"):read("a"):match("^(%d+)"))
local started = os.time()
local next_report = started + 60
local windows, events = 0, 0
local workload_pid
local p = profsh.profile{
  activities = {"nvtx"},
  schedule = profsh.schedule{wait = 5, warmup = 1, active = 2},
  step_marker = "^iteration$",
  on_trace_ready = function(t)
    windows = windows + 1
    events = events + #t
    workload_pid = workload_pid or t:processes()[1].pid
    local now = os.time()
    if now >= next_report then
      next_report = next_report + 60
      print(string.format("minute %2d: %6d windows, %9d events; profsh RSS %6.1f MB (peak %6.1f); workload RSS %6.1f MB (peak %6.1f)",
                          (now - started) // 60, windows, events, status_kb(self_pid, "VmRSS") / 1024,
                          status_kb(self_pid, "VmHWM") / 1024, (status_kb(workload_pid, "VmRSS") or 0) / 1024,
                          (status_kb(workload_pid, "VmHWM") or 0) / 1024))
      io.stdout:flush()
    end
  end}
-- The sample runs 20 ms iterations; `timeout` ends it after the soak.
p:run(string.format("exec timeout %d %s/nvtx_pipeline 1000000000 > /dev/null", minutes * 60, profsh.library_dir))
print(string.format("done: %d windows, %d events in %d minutes; %s", windows, events, minutes, p.summary.text))
