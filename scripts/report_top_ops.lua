-- A report template: the top operators as a Markdown table, with the share of self time and
-- the average call, ready to paste into an issue or a pull request.
--   profsh scripts/report_top_ops.lua [TRACE [N]]
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or ".") .. "/common.lua")
local trace, path = common.trace_arg("resnet18_cpu.pt.trace.json.gz")
local n = tonumber(arg and arg[2]) or 8

local avgs = trace:key_averages()
local total = avgs:total_average().self_cpu_time_total
print(string.format("### %s\n", path))
print(string.format("%d operators, %.3f ms of self CPU time.\n", #avgs, total / 1000))
print("| operator | calls | self CPU | share | avg per call |")
print("|---|---:|---:|---:|---:|")
for i, a in ipairs(avgs:sorted("self_cpu_time_total")) do
  if i > n then break end
  print(string.format("| `%s` | %d | %.3f ms | %.1f%% | %.1f us |", a.key, a.count,
                      a.self_cpu_time_total / 1000, 100 * a.self_cpu_time_total / total, a.cpu_time))
end
