-- Step 5 of the PyTorch profiler recipe on a live run: a Chrome trace of resnet18 inference for
-- chrome://tracing or https://ui.perfetto.dev.
--   profsh scripts/resnet18_chrome_trace.lua [OUTPUT]
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or ".") .. "/common.lua")
local out = arg and arg[1] or "trace.json"

-- As the recipe, only the model call is profiled (not building the model and its weights):
-- the capture range records what runs inside record_function("model_inference").
local prof = profsh.profile{activities = {"torch"},
                            capture_range = "model_inference"}
common.run_python(prof, "resnet18.py")

prof:export_chrome_trace(out)
print(string.format("wrote %s (%d events)", out, prof.event_count))
