-- Step 5 of the PyTorch profiler recipe: a trace for chrome://tracing or ui.perfetto.dev.
--   profsh scripts/chrome_trace.lua [TRACE [OUTPUT]]
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or ".") .. "/common.lua")
local trace = common.trace_arg("alexnet_a100.pt.trace.json.gz")
local out = arg and arg[2] or "trace.json"

trace:export_chrome_trace(out)
print(string.format("wrote %s (%d events); open it in https://ui.perfetto.dev or chrome://tracing",
                    out, trace.event_count))
