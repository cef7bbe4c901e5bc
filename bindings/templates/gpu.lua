-- The GPU report: HTA's analyses of where device time went (times in us, as HTA gives them).
local report = ...
local t = report.trace
local us = {kernel_time = "us", idle_time = "us", compute_time = "us", non_compute_time = "us",
            exposed_comm_time = "us", exposed_memory_time = "us", sum = "us", max = "us",
            min = "us", mean = "us", stddev = "us", cpu_duration = "us", gpu_duration = "us",
            launch_delay = "us", idle_time_pctg = "%", compute_time_pctg = "%",
            non_compute_time_pctg = "%", percentage = "%", comp_comm_overlap_pctg = "%",
            idle_time_ratio = "ratio"}

report:subtitle(("%s: %s, %.3f ms"):format(t.path, report:count(t.event_count, "event", "events"),
                                          t.duration / 1000))

local temporal = t:temporal_breakdown()
report:section("Temporal breakdown", "temporal")
report:text("Per rank, how the device's time splits between computation, other kernels "
            .. "(communication, memory) and idleness.")
report:table(temporal, {units = us})
local per_rank = {}
for i, r in ipairs(temporal) do
  per_rank[i] = {rank = "rank " .. tostring(r.rank), compute = r.compute_time,
                 non_compute = r.non_compute_time, idle = r.idle_time}
end
report:chart{kind = "stacked", title = "Device time per rank", unit = "us", rows = per_rank,
             category = "rank", values = {"compute", "non_compute", "idle"},
             labels = {non_compute = "non-compute"}}

local idle = t:idle_time_breakdown()
report:section("Idle time", "idle")
report:text("Why each stream waited: for the host (host_wait), between kernels (kernel_wait), other.")
report:table(idle, {units = us})
local streams, by_stream = {}, {}
for _, r in ipairs(idle) do
  local key = "rank " .. tostring(r.rank) .. " stream " .. tostring(r.stream)
  if not by_stream[key] then
    by_stream[key] = {stream = key, host_wait = 0, kernel_wait = 0, other = 0}
    streams[#streams + 1] = by_stream[key]
  end
  local category = r.idle_category
  if by_stream[key][category] ~= nil then by_stream[key][category] = by_stream[key][category] + r.idle_time end
end
if #streams > 0 then
  report:chart{kind = "stacked", title = "Idle time per stream", unit = "us", rows = streams,
               category = "stream", values = {"host_wait", "kernel_wait", "other"}}
end

local by_type, by_kernel = t:kernel_breakdown()
report:section("Kernel breakdown", "kernels")
report:table(by_type, {units = us, sort = "sum"})
report:chart{kind = "bar", title = "Kernel time by type", unit = "us", rows = by_type,
             category = "kernel_type", values = {"sum"}}
report:heading("Top kernels")
report:table(by_kernel, {units = us, sort = "sum", limit = 20})

report:section("Communication and computation overlap", "overlap")
report:table(t:comm_comp_overlap(), {units = us})

local launches = t:kernel_launch_stats()
report:section("Kernel launches", "launches")
report:text("%s launched: %s (shorter on the device than their launch on the host), %s, %s.",
            report:count(#launches, "kernel", "kernels"),
            report:count(#launches.short_kernels, "short kernel", "short kernels"),
            report:count(#launches.long_launches, "long launch", "long launches"),
            report:count(#launches.long_delays, "long launch delay", "long launch delays"))
report:table(launches, {units = us, sort = "launch_delay", limit = 20,
                        caption = "The longest launch delays."})

report:section("Queue length", "queue")
report:table(t:queue_length_summary())

-- The critical path of the first step (the whole trace without ProfilerStep ranges); a trace of
-- several ranks is linked at its collectives. A trace the analysis cannot read says why.
report:section("Critical path", "critical_path")
local has_steps = #t:events{pattern = "^ProfilerStep#", limit = 1} > 0
local ok, cp = pcall(t.critical_path, t, has_steps and {annotation = "ProfilerStep", instance = 0}
                                         or {annotation = ""})
if ok then
  report:text("The longest chain of dependent work in %s (HTA's critical path analysis): %s. "
              .. "Time off this path can shrink without the step getting shorter; cp:whatif{...} "
              .. "says what a change would gain.",
              has_steps and "the first step" or "the trace", report:duration(cp.duration))
  local summary = cp:summary()
  report:table(summary, {units = {pct = "%", duration_us = "us"}})
  report:chart{kind = "bar", title = "Critical path by what bounds it", unit = "%", rows = summary,
               category = "bound_by", values = {"pct"}}
  report:heading("Where the path's time goes")
  report:table(cp:contributors(10), {units = {duration = "us", pct = "%"}})
else
  report:text("No critical path: %s", tostring(cp))
end

report:section("Timeline", "timeline")
report:timeline(t)
report:link("temporal", "Back to the temporal breakdown")
