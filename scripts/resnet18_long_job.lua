-- Step 8 of the PyTorch profiler recipe on a live run: a long job profiled in windows. The
-- workload (resnet18.py --steps 30) marks each step with record_function("iteration"); the
-- step marker finds them, so the script needs no prof.step(). The schedule is the recipe's:
-- skip 10 steps, then twice wait 5, warm up 1, record 3; each window goes to the handler while
-- the job runs.
--   profsh scripts/resnet18_long_job.lua [STEPS]
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or ".") .. "/common.lua")
local steps = arg and arg[1] or "30"

local function trace_handler(p)
  print(p:key_averages():table{sort_by = "self_cpu_time_total", row_limit = 10})
  local path = "trace_" .. p.step_num .. ".json"
  p:export_chrome_trace(path)
  print(string.format("steps %d-%d: wrote %s", p.steps[1], p.steps[2], path))
end

local prof = profsh.profile{
  activities = {"torch"},
  schedule = profsh.schedule{skip_first = 10, wait = 5, warmup = 1, active = 3, ["repeat"] = 2},
  on_trace_ready = trace_handler,
  step_marker = "^iteration$",
}
common.run_python(prof, "resnet18.py", "--steps", steps, "--batch", "2", "--size", "112")
print(string.format("%d windows", prof.windows or 0))
