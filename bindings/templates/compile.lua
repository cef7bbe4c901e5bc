-- The torch.compile report: compiled regions, graph breaks and recompiles (times in us).
local report = ...
local t = report.trace
local us = {cpu_time = "us", compile_time = "us", gpu_busy = "us", gpu_idle = "us",
            mean_launch_delay = "us", step_time = "us", run_time = "us", guard_time = "us",
            eager_time = "us", host_wait_share = "ratio", time = "us", duration = "us",
            op_time = "us", percentage = "%"}

report:subtitle(("%s: %d events, %.3f ms"):format(t.path, t.event_count, t.duration / 1000))

local regions = t:compile_regions()
report:section("Compiled regions", "regions")
report:table(regions, {units = us, sort = "cpu_time", limit = 30})
local with_device_work = false
for _, r in ipairs(regions) do
  if r.verdict ~= "no device work" then with_device_work = true end
end
if with_device_work then
  report:chart{kind = "stacked", title = "Device time of the compiled regions", unit = "us",
               rows = regions, category = "region", values = {"gpu_busy", "gpu_idle"},
               labels = {gpu_busy = "GPU busy", gpu_idle = "GPU idle"}}
elseif #regions > 0 then
  report:text("No compiled region launched device work (a CPU-only trace): no GPU busy/idle chart.")
end

local steps = t:graph_breaks()
report:section("Graph breaks per step", "graph-breaks")
report:table(steps, {units = us})
if #steps > 0 then
  -- Each bar is its step's time (the row without a step: the time outside every step, or the
  -- whole trace when it has no steps), so the bars add up to at most the trace's span. Eager
  -- time is part of the run time (eager operators run outside compile work on their thread);
  -- it is capped at the run time where other threads compiled at the same time.
  local rows = {}
  for i, s in ipairs(steps) do
    local label = s.step and tostring(s.step) or (#steps == 1 and "whole trace" or "outside steps")
    local eager = math.min(s.eager_time, s.run_time)
    rows[i] = {step = label, compile = s.compile_time, eager = eager, other = s.run_time - eager}
  end
  report:chart{kind = "stacked", title = "Where each step's time went", unit = "us", rows = rows,
               category = "step", values = {"compile", "eager", "other"},
               labels = {eager = "eager islands", other = "compiled code and the rest"}}
end

report:section("Recompiles", "recompiles")
if #steps.recompiles == 0 then
  report:text("No region was compiled again.")
else
  report:table(steps.recompiles, {units = us})
end
report:heading("Eager islands")
if #steps.islands == 0 then
  report:text("No eager code between compiled regions.")
else
  report:table(steps.islands, {units = us, limit = 30})
end

report:section("Kernels of compiled code", "provenance")
report:table(t:kernel_provenance(), {units = us, limit = 30})
report:link("regions", "Back to the compiled regions")
