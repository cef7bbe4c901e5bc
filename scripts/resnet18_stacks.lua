-- Steps 6 and 7 of the PyTorch profiler recipe on a live run: operators grouped by the top five
-- frames of their Python stack (read from the interpreter's frames in the operator callback,
-- with nn.Module frames as torch writes them), the stacks exported in the folded format, and the
-- flamegraph drawn from them without flamegraph.pl.
--   profsh scripts/resnet18_stacks.lua [OUTPUT.txt]
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or ".") .. "/common.lua")
local out = arg and arg[1] or "profiler_stacks.txt"

-- As the recipe, only the model call is profiled (not building the model and its weights):
-- the capture range records what runs inside record_function("model_inference").
local prof = profsh.profile{activities = {"torch"}, with_stack = true,
                            capture_range = "model_inference"}
common.run_python(prof, "resnet18.py")

-- The recipe sorts by self CUDA time on a GPU; this run has CPU time.
print(prof:key_averages{group_by_stack_n = 5}:table{sort_by = "self_cpu_time_total", row_limit = 2})

prof:export_stacks(out, "self_cpu_time_total")
print("wrote " .. out .. " (folded stacks, self_cpu_time_total)")
local svg = out:gsub("%.txt$", "") .. ".svg"
local drawn = profsh.flamegraph(out, svg, {title = "resnet18: Python stacks, self CPU time", count_name = "us"})
print(string.format("wrote %s (%d stacks, %d frames)", svg, drawn.stacks, drawn.frames))
