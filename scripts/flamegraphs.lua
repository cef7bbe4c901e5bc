-- Flamegraphs of one trace from every side, and what changed between two runs.
--   profsh scripts/flamegraphs.lua [TRACE [BASELINE_TRACE]]
-- Writes operators.svg (the nesting of operators and ranges by self CPU time), python.svg (the
-- Python stacks, when the trace was recorded with with_stack=True), operators.speedscope.json,
-- and with a baseline, diff.svg: widths from TRACE, red where it spends more than the baseline.
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or ".") .. "/common.lua")
local trace = common.trace_arg("mlp_training_cpu.pt.trace.json.gz")

local function report(path, summary)
  print(string.format("wrote %-26s %5d stacks, %5d frames drawn, total %.0f", path, summary.stacks,
                      summary.frames, summary.total))
end

report("operators.svg", trace:flamegraph("operators.svg", {stacks = "operators", title = "Operators"}))

local ok, summary = pcall(trace.flamegraph, trace, "python.svg", {stacks = "python", title = "Python stacks"})
if ok then
  report("python.svg", summary)
else
  print("no python.svg: " .. tostring(summary))
end

trace:export_speedscope("operators.speedscope.json", {stacks = "operators"})
print("wrote operators.speedscope.json (open it at https://www.speedscope.app)")

local baseline_path = arg and arg[2]
if baseline_path then
  local baseline = profsh.load(baseline_path)
  -- Threads are matched by name (and rank), not pid: the two runs' pids differ.
  report("diff.svg", profsh.flamegraph_diff(baseline, trace, "diff.svg",
                                            {stacks = "operators", normalize = true, thread_frames = "names"}))
end
