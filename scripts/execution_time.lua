-- Step 3 of the PyTorch profiler recipe: where the time goes, by operator and by input shape.
--   profsh scripts/execution_time.lua [TRACE]
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or ".") .. "/common.lua")
local trace = common.trace_arg("resnet18_cpu.pt.trace.json.gz")

print(trace:key_averages():table{sort_by = "cpu_time_total", row_limit = 10})
-- Self time excludes the operators called from inside an operator.
print(trace:key_averages():table{sort_by = "self_cpu_time_total", row_limit = 10})
-- Needs a trace recorded with record_shapes=True.
print(trace:key_averages{group_by_input_shape = true}:table{sort_by = "cpu_time_total", row_limit = 10})
