-- The first thing to run: load a trace and print the operators that took the most time, as
-- torch.profiler's key_averages().table() prints them.
--   profsh scripts/quickstart.lua [TRACE]
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or ".") .. "/common.lua")
local trace, path = common.trace_arg("resnet18_cpu.pt.trace.json.gz")

print(trace)
print(trace:key_averages():table{sort_by = "cpu_time_total", row_limit = 10})
