-- The ranks report: a distributed job's ranks side by side, and who arrives last to the
-- collectives. Give one trace per rank (profsh report rank-*.json.gz --template ranks), one
-- trace that holds every rank (a profsh run session of a torchrun job), or the job's rank
-- summaries (profsh report summaries/*.sqlite --template ranks: profsh summarize wrote them, and
-- the traces need not be there).
local report = ...

local function all_summaries(paths)
  for _, p in ipairs(paths) do
    if not p:match("%.sqlite$") then return false end
  end
  return #paths > 0
end

local summaries = all_summaries(report.paths)
local t
if summaries then
  t = profsh.load_summaries(report.paths)
else
  t = #report.paths > 1 and profsh.load_ranks(report.paths) or report.trace
end

if summaries then
  report:subtitle(("%s, %s, from their summaries"):format(
    report:count(math.max(1, #t.ranks), "rank", "ranks"),
    report:count(t.event_count, "event", "events")))
else
  report:subtitle(("%s, %s, %.3f ms"):format(report:count(math.max(1, #t.ranks), "rank", "ranks"),
                                            report:count(t.event_count, "event", "events"),
                                            t.duration / 1000))
end

report:section("Ranks", "ranks")
if #t.ranks > 1 then
  local rows = {}
  for i, r in ipairs(t.ranks) do
    rows[i] = {rank = r.rank, path = r.path, offset = r.offset}
  end
  report:table(rows, {columns = {"rank", "path", "offset"}, units = {offset = "us"},
                      caption = "Each rank's file and the shift that aligned its clock."})
  report:text("Skew left after alignment: median %.3f us, max %.3f us.", t.ranks.skew_median or 0,
              t.ranks.skew_max or 0)
else
  report:text("The trace holds one rank.")
end

local temporal = t:temporal_breakdown()
report:section("Device time per rank", "device")
if #temporal == 0 then
  report:text("No kernels: the ranks ran on the CPU (%s).", table.concat(temporal.notes, " "))
else
  local rows = {}
  for i, r in ipairs(temporal) do
    rows[i] = {rank = "rank " .. tostring(r.rank), compute = r.compute_time,
               non_compute = r.non_compute_time, idle = r.idle_time}
  end
  report:chart{kind = "stacked", title = "Device time per rank", unit = "us", rows = rows,
               category = "rank", values = {"compute", "non_compute", "idle"},
               labels = {non_compute = "non-compute"}}
  report:table(temporal, {units = {kernel_time = "us", idle_time = "us", compute_time = "us",
                                   non_compute_time = "us"}})
end

local calls = t:collectives()
local us = {start = "us", ["end"] = "us", duration = "us", arrival_skew = "us", wait = "us",
            mean_arrival_skew = "us", max_arrival_skew = "us", total_wait = "us"}
report:section("Stragglers", "stragglers")
if #calls == 0 then
  report:text("No collectives matched: %s", table.concat(calls.notes, " "))
else
  if calls.straggler ~= nil then
    report:text("Rank %s arrived last to the collectives most often: the straggler.", tostring(calls.straggler))
  end
  local rows, by_rank = {}, {}
  for _, r in ipairs(calls.ranks) do by_rank[#by_rank + 1] = r end
  table.sort(by_rank, function(a, b) return a.rank < b.rank end)
  for i, r in ipairs(by_rank) do
    rows[i] = {rank = "rank " .. tostring(r.rank), last_arrivals = r.last_arrivals,
               total_wait = r.total_wait, mean_arrival_skew = r.mean_arrival_skew}
  end
  report:chart{kind = "bar", title = "Time each rank waited for the others", unit = "us",
               rows = rows, category = "rank", values = {"total_wait"}}
  report:chart{kind = "bar", title = "Last arrivals per rank", rows = rows, category = "rank",
               values = {"last_arrivals"}}
  report:table(calls.ranks, {units = us})
  report:heading("The collectives with the longest waits")
  report:table(calls, {units = us, sort = "wait", limit = 20})
end
if summaries then
  -- Step times come from the summaries' ProfilerStep#N ranges; a job recorded without steps
  -- has none, and says so.
  report:section("Slow and drifting ranks", "steps")
  local ok, slowest = pcall(t.slowest_ranks, t)
  if not ok then
    report:text("%s", tostring(slowest))
  else
    report:text("The slowest rank of each step, beside the median over ranks.")
    report:table(slowest, {units = {duration = "us", median = "us", excess = "us",
                                    fastest_duration = "us"}, sort = "excess", limit = 20})
    local drifting = t:drifting_ranks()
    local n = 0
    for _, r in ipairs(drifting) do n = n + r.drifting end
    report:text("%s whose step time drifts out of line with the others': %s", report:count(n, "rank", "ranks"),
                table.concat(drifting.notes, " "))
    report:table(drifting, {units = {mean_step = "us", slope = "us", drift = "us",
                                     drift_over_steps = "us"}, limit = 20})
  end
end
report:link("ranks", "Back to the ranks")
