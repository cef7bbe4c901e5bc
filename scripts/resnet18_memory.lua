-- Step 4 of the PyTorch profiler recipe on a live run: the memory resnet18's operators allocate
-- and release, as torch.profiler's profile_memory=True reports it. "Self" memory leaves out the
-- operators called from inside an operator.
--   profsh scripts/resnet18_memory.lua
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or ".") .. "/common.lua")

-- As the recipe, only the model call is profiled (not building the model and its weights):
-- the capture range records what runs inside record_function("model_inference").
local prof = profsh.profile{activities = {"torch"}, profile_memory = true, record_shapes = true,
                            capture_range = "model_inference"}
common.run_python(prof, "resnet18.py")

print(prof:key_averages():table{sort_by = "self_cpu_memory_usage", row_limit = 10})
print(prof:key_averages():table{sort_by = "cpu_memory_usage", row_limit = 10})

-- Beyond the recipe: the process's allocated bytes over time (also a "CPU Memory" counter
-- track in the Chrome trace), its peak, and what was still allocated at exit.
local timeline = prof:memory_timeline()
local mb = 1024 * 1024
-- (Rounded first, so that a few bytes freed more than allocated do not print as -0.0.)
local function megabytes(bytes) return math.floor(bytes / mb * 10 + 0.5) / 10 end
print(string.format("memory: %d points, peak %.1f MB, %.1f MB still allocated when the model call ended",
                    #timeline, megabytes(timeline.peak), megabytes(timeline.at_end)))
