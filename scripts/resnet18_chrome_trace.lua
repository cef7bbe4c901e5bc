-- Step 5 of the PyTorch profiler recipe on a live run: a Chrome trace of resnet18 inference for
-- chrome://tracing or https://ui.perfetto.dev.
--   profsh scripts/resnet18_chrome_trace.lua [OUTPUT]
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or ".") .. "/common.lua")
local out = arg and arg[1] or "trace.json"

local prof = profsh.profile{activities = {"torch"}}
common.run_python(prof, "resnet18.py")

prof:export_chrome_trace(out)
print(string.format("wrote %s (%d events, %d operators)", out, prof.event_count, prof.summary.operators))
