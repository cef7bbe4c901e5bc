-- The summary report: top operators, time by category, memory, flamegraph, timeline, warnings.
local report = ...
local t = report.trace

report:subtitle(("%s: %s, %s, %s, %.3f ms"):format(
  t.path, report:count(t.event_count, "event", "events"),
  report:count(#t:processes(), "process", "processes"),
  report:count(#t:threads(), "thread", "threads"), t.duration / 1000))

local avgs = t:key_averages()
local total = avgs:total_average()
local total_self = total.self_cpu_time_total
-- A trace without device time (CPU only) gets no device columns: they would be all zeros.
local device = total.self_cuda_time_total ~= 0

report:section("Top operators", "operators")
report:text("%d distinct names; %.3f ms of self CPU time in all. Sorted by self CPU time; click a "
            .. "column to sort by it.%s", #avgs, total_self / 1000,
            device and "" or " The trace records no device time.")
local columns = {"key", "kind", "count", "self_cpu_time_total", "cpu_time_total", "cpu_time"}
if device then columns[#columns + 1] = "self_cuda_time_total" end
report:table(avgs, {columns = columns, sort = "self_cpu_time_total", limit = 25,
                    labels = {key = "name", cpu_time = "avg per call"}})
local time_values = device and {"self_cpu", "self_device"} or {"self_cpu"}
local top = {}
for i, a in ipairs(avgs:sorted("self_cpu_time_total")) do
  if i > 12 then break end
  top[i] = {name = a.key, self_cpu = a.self_cpu_time_total, self_device = a.self_cuda_time_total}
end
report:chart{kind = "bar", title = "Self time of the top operators", unit = "us", rows = top,
             category = "name", values = time_values,
             labels = {self_cpu = "self CPU", self_device = "self device"}}

report:section("Time by category", "categories")
local by_kind, kinds = {}, {}
for _, a in ipairs(avgs:sorted("self_cpu_time_total")) do
  local k = a.kind or "other"
  if not by_kind[k] then
    by_kind[k] = {category = k, names = 0, calls = 0, self_cpu = 0, self_device = 0}
    kinds[#kinds + 1] = by_kind[k]
  end
  local row = by_kind[k]
  row.names = row.names + 1
  row.calls = row.calls + a.count
  row.self_cpu = row.self_cpu + a.self_cpu_time_total
  row.self_device = row.self_device + a.self_cuda_time_total
end
table.sort(kinds, function(x, y) return x.self_cpu + x.self_device > y.self_cpu + y.self_device end)
local kind_columns = {"category", "names", "calls", "self_cpu"}
if device then kind_columns[#kind_columns + 1] = "self_device" end
report:table(kinds, {columns = kind_columns, units = {self_cpu = "us", self_device = "us"},
                     sort = "self_cpu"})
report:chart{kind = "stacked", title = "Self time by category", unit = "us", rows = kinds,
             category = "category", values = time_values,
             labels = {self_cpu = "self CPU", self_device = "self device"}}

report:section("Memory", "memory")
local m = t:memory_timeline()
if #m == 0 then
  report:text("The trace records no allocations (torch.profiler's profile_memory=True, or "
              .. "profsh run, records them).")
else
  report:text("Host memory: peak %s (%s bytes); still held at the end: %s (%s bytes); %s.",
              report:bytes(m.peak), report:number(m.peak), report:bytes(m.at_end),
              report:number(m.at_end), report:count(#m, "allocation or free", "allocations and frees"))
  -- The running total of each process and device. The report keeps each stretch of time's
  -- lowest and highest points of a long curve, so the chart's top is the peak.
  local curves, order = {}, {}
  for _, p in ipairs(m) do
    local key = tostring(p.pid) .. " " .. p.device
    if not curves[key] then curves[key] = {x = {}, y = {}}; order[#order + 1] = key end
    local c = curves[key]
    c.x[#c.x + 1] = p.ts / 1000
    c.y[#c.y + 1] = p.total
  end
  for _, key in ipairs(order) do
    report:chart{kind = "line", step = true, title = "Memory held by process " .. key, unit = "bytes",
                 x_name = "time (ms)", x = curves[key].x, series = {{name = key, values = curves[key].y}}}
  end
end

report:section("Flamegraph", "flamegraph")
local ok, err = pcall(report.flamegraph, report, t, {title = "Operators by self CPU time"})
if not ok then report:text("No flamegraph: %s", tostring(err)) end

report:section("Timeline", "timeline")
report:text("How busy each thread and GPU stream is over the trace (darker: busier); the "
            .. "busiest 48 tracks.")
report:timeline(t)

report:section("Warnings and drops", "warnings")
if #t.warnings == 0 then
  report:text("The trace loaded without warnings.")
else
  report:list(t.warnings)
end
-- What a profsh recording counted as lost (a saved profsh run keeps the counts).
local recording = type(t.metadata) == "table" and t.metadata.profsh
if type(recording) == "table" and recording.dropped_events ~= nil then
  local losses = {}
  for _, name in ipairs{"dropped_ranges", "dropped_events", "events_without_thread_slot",
                        "strings_refused", "metadata_refused", "events_after_close", "late_events",
                        "pops_without_push", "ends_of_unknown_ranges", "ranges_open_at_end",
                        "ranges_open_at_thread_exit", "streams_cut_short"} do
    if recording[name] ~= nil then losses[#losses + 1] = {counter = name, count = recording[name]} end
  end
  report:table(losses, {columns = {"counter", "count"}, limit = 0,
                        caption = "What the recording counted as dropped or cut short."})
else
  report:text("The trace is not a profsh recording: it counts no drops.")
end
report:link("operators", "Back to the top operators")
