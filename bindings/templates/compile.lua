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
if #regions > 0 then
  report:chart{kind = "stacked", title = "Device time of the compiled regions", unit = "us",
               rows = regions, category = "region", values = {"gpu_busy", "gpu_idle"},
               labels = {gpu_busy = "GPU busy", gpu_idle = "GPU idle"}}
end

local steps = t:graph_breaks()
report:section("Graph breaks per step", "graph-breaks")
report:table(steps, {units = us})
if #steps > 0 then
  local rows = {}
  for i, s in ipairs(steps) do
    rows[i] = {step = tostring(s.step), compile = s.compile_time, run = s.run_time,
               eager = s.eager_time}
  end
  report:chart{kind = "stacked", title = "Where each step's time went", unit = "us", rows = rows,
               category = "step", values = {"compile", "run", "eager"}}
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
