-- Steps 6 and 7 of the PyTorch profiler recipe: operators grouped by the top of their Python
-- stack, the stacks exported in the folded format that flamegraph tools read, and the
-- flamegraph itself, which the recipe draws with flamegraph.pl and profsh draws on its own.
--   profsh scripts/stacks.lua [TRACE [OUTPUT]]   (a trace recorded with with_stack=True)
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or ".") .. "/common.lua")
local trace = common.trace_arg("mlp_training_cpu.pt.trace.json.gz")
local out = arg and arg[2] or "profiler_stacks.txt"

local by_stack = trace:key_averages{group_by_stack_n = 5}
-- The recipe sorts by CUDA time; on a CPU-only trace, CPU time is what there is.
local has_cuda = by_stack:total_average().self_cuda_time_total > 0
local metric = has_cuda and "self_cuda_time_total" or "self_cpu_time_total"
print(by_stack:table{sort_by = metric, row_limit = 2})

trace:export_stacks(out, metric)
print("wrote " .. out .. " (folded stacks, " .. metric .. ")")

local svg = out:gsub("%.txt$", "") .. ".svg"
local drawn = profsh.flamegraph(out, svg, {title = "Python stacks, " .. metric, count_name = "us"})
print(string.format("wrote %s (%d stacks, %d frames)", svg, drawn.stacks, drawn.frames))
