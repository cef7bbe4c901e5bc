-- The diff report: two traces (control, then test), per name what grew and what shrank in time
-- (HTA's TraceDiff, each trace's first ProfilerStep or the whole trace), and the differential
-- flamegraph (red: grew in the test, blue: shrank).
local report = ...
if #report.traces ~= 2 then
  error("the diff template compares two traces (control, test); got " .. #report.traces)
end
local control, test = report.traces[1], report.traces[2]
report:subtitle(("control: %s; test: %s"):format(control.path, test.path))

-- Rows by the size of their change in time, largest first: a name can take 100 ms longer with
-- the same count, which HTA's groups (by counts alone) call "unchanged".
local diff = profsh.diff(control, test, {sort = "diff_duration"})
local us = {control_total_duration = "us", test_total_duration = "us", diff_duration = "us"}
local columns = {"name", "diff_duration", "control_total_duration", "test_total_duration",
                 "diff_counts", "control_counts", "test_counts"}
local labels = {diff_duration = "time change", diff_counts = "count change"}
local grew, shrank, changes = {}, {}, {}
for _, r in ipairs(diff) do
  changes[r.change] = (changes[r.change] or 0) + 1
  if r.diff_duration > 0 then grew[#grew + 1] = r elseif r.diff_duration < 0 then shrank[#shrank + 1] = r end
end
local rule = "diff_duration: the test's total time of the name minus the control's (us, HTA's "
             .. "rounding), within the steps compared"

report:section("Overview", "overview")
report:text("HTA's groups of names, by their counts alone (a name whose count stays the same is "
            .. "'unchanged' however its time moved); what grew and what shrank below go by time.")
local summary = {}
for _, c in ipairs{"added", "deleted", "increased", "decreased", "unchanged"} do
  summary[#summary + 1] = {change = c, names = changes[c] or 0}
end
report:table(summary, {columns = {"change", "names"}, labels = {change = "HTA's group"}})
report:link("grew", "What grew")
report:link("shrank", "What shrank")

report:section("What grew", "grew")
report:text("The %s whose time grew, most first, by %s. Names whose time did not change are "
            .. "not listed.", report:count(#grew, "name", "names"), rule)
report:table(grew, {columns = columns, labels = labels, units = us, sort = "diff_duration", limit = 25})
local function chart_rows(list, n)
  local rows = {}
  for i = 1, math.min(n, #list) do
    rows[i] = {name = list[i].name, control = list[i].control_total_duration or 0,
               test = list[i].test_total_duration or 0}
  end
  return rows
end
report:chart{kind = "bar", title = "The names that grew most", unit = "us",
             rows = chart_rows(grew, 12), category = "name", values = {"control", "test"}}

report:section("What shrank", "shrank")
report:text("The %s whose time shrank, most first, by %s.", report:count(#shrank, "name", "names"),
            rule)
report:table(shrank, {columns = columns, labels = labels, units = us, sort = "diff_duration",
                      ascending = true, limit = 25})
report:chart{kind = "bar", title = "The names that shrank most", unit = "us",
             rows = chart_rows(shrank, 12), category = "name", values = {"control", "test"}}

report:section("Differential flamegraph", "flamegraph")
local ok, err = pcall(report.flamegraph_diff, report, control, test,
                      {title = "Differential flamegraph (red: grew, blue: shrank)"})
if not ok then report:text("No differential flamegraph: %s", tostring(err)) end
