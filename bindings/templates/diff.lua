-- The diff report: two traces (control, then test), per name what grew and what shrank (HTA's
-- TraceDiff, each trace's first ProfilerStep or the whole trace), and the differential
-- flamegraph (red: grew in the test, blue: shrank).
local report = ...
if #report.traces ~= 2 then
  error("the diff template compares two traces (control, test); got " .. #report.traces)
end
local control, test = report.traces[1], report.traces[2]
report:subtitle(("control: %s; test: %s"):format(control.path, test.path))

local diff = profsh.diff(control, test)
local us = {control_total_duration = "us", test_total_duration = "us", diff_duration = "us"}
local columns = {"name", "control_counts", "control_total_duration", "test_counts",
                 "test_total_duration", "diff_counts", "diff_duration", "change"}
local grew, shrank, changes = {}, {}, {}
for _, r in ipairs(diff) do
  changes[r.change] = (changes[r.change] or 0) + 1
  if r.diff_duration > 0 then grew[#grew + 1] = r elseif r.diff_duration < 0 then shrank[#shrank + 1] = r end
end

report:section("Overview", "overview")
local summary = {}
for _, c in ipairs{"added", "deleted", "increased", "decreased", "unchanged"} do
  summary[#summary + 1] = {change = c, names = changes[c] or 0}
end
report:table(summary, {columns = {"change", "names"}})
report:link("grew", "What grew")
report:link("shrank", "What shrank")

report:section("What grew", "grew")
report:table(grew, {columns = columns, units = us, sort = "diff_duration", limit = 25})
local function chart_rows(list, n)
  local rows = {}
  for i = 1, math.min(n, #list) do
    rows[i] = {name = list[i].name, control = list[i].control_total_duration or 0,
               test = list[i].test_total_duration or 0}
  end
  return rows
end
table.sort(grew, function(a, b) return a.diff_duration > b.diff_duration end)
report:chart{kind = "bar", title = "The names that grew most", unit = "us",
             rows = chart_rows(grew, 12), category = "name", values = {"control", "test"}}

report:section("What shrank", "shrank")
report:table(shrank, {columns = columns, units = us, sort = "diff_duration", ascending = true, limit = 25})
table.sort(shrank, function(a, b) return a.diff_duration < b.diff_duration end)
report:chart{kind = "bar", title = "The names that shrank most", unit = "us",
             rows = chart_rows(shrank, 12), category = "name", values = {"control", "test"}}

report:section("Differential flamegraph", "flamegraph")
local ok, err = pcall(report.flamegraph_diff, report, control, test,
                      {title = "Differential flamegraph (red: grew, blue: shrank)"})
if not ok then report:text("No differential flamegraph: %s", tostring(err)) end
