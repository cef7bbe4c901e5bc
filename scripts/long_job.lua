-- The seed recipe's trace_handler example, on an unmodified workload: torch's schedule picks
-- windows of steps, and each finished window is handed to trace_handler while the job runs.
--   profsh scripts/long_job.lua [CMD [ARGS...]]
-- Default: the bundled NVTX sample (12 iterations, each an "iteration" range). For PyTorch jobs
-- leave out step_marker: ProfilerStep#N ranges (emit_nvtx / emit_itt) mark their steps.
-- Writes trace_<step>.json (Chrome / Perfetto) in the current folder for each window.
local command = {}
for i = 1, #(arg or {}) do command[i] = arg[i] end
local step_marker = "^iteration$"
if #command == 0 then
  command = {profsh.library_dir .. "/nvtx_pipeline", "12"}
else
  step_marker = nil  -- PyTorch's ProfilerStep#N
end

local function trace_handler(p)
  local output = p:key_averages():table{sort_by = "self_cpu_time_total", row_limit = 10}
  print(string.format("steps %d-%d (step_num %d)", p.steps[1], p.steps[2], p.step_num))
  print(output)
  p:export_chrome_trace("trace_" .. p.step_num .. ".json")
end

local p = profsh.profile{
  activities = {"nvtx", "itt"},
  schedule = profsh.schedule{wait = 1, warmup = 1, active = 2},
  step_marker = step_marker,
  on_trace_ready = trace_handler,
}
local status = p:run(command)
print(p.summary.text)
if status ~= 0 then os.exit(status) end
