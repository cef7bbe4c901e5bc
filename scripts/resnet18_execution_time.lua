-- Steps 2 and 3 of the PyTorch profiler recipe on a live run: resnet18 inference (resnet18.py,
-- unchanged) under profsh's operator source, then the execution-time tables.
--   profsh scripts/resnet18_execution_time.lua        (runs $PROFSH_PYTHON or python3)
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or ".") .. "/common.lua")

-- torch.profiler.profile(activities=[ProfilerActivity.CPU], record_shapes=True) around
-- `with record_function("model_inference"): model(inputs)`
-- As the recipe, only the model call is profiled (not building the model and its weights):
-- the capture range records what runs inside record_function("model_inference").
local prof = profsh.profile{activities = {"torch"}, record_shapes = true,
                            capture_range = "model_inference"}
common.run_python(prof, "resnet18.py")

print(prof:key_averages():table{sort_by = "cpu_time_total", row_limit = 10})
-- Finer granularity: the same operators split by the shapes of their inputs.
print(prof:key_averages{group_by_input_shape = true}:table{sort_by = "cpu_time_total", row_limit = 10})
