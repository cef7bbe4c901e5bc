-- Step 4 of the PyTorch profiler recipe: memory allocated (or freed) by each operator.
-- "Self" memory leaves out the memory of the operators it called.
--   profsh scripts/memory.lua [TRACE]   (a trace recorded with profile_memory=True)
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or ".") .. "/common.lua")
local trace = common.trace_arg("resnet18_cpu.pt.trace.json.gz")

local avgs = trace:key_averages()
if not avgs.profile_memory then
  io.stderr:write("this trace has no memory records (record it with profile_memory=True)\n")
end
print(avgs:table{sort_by = "self_cpu_memory_usage", row_limit = 10})
print(avgs:table{sort_by = "cpu_memory_usage", row_limit = 10})
