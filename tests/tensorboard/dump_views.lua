-- Writes profsh's TensorBoard views of a trace as CSV files into a folder (check_views_golden.py
-- compares them with the plugin's answers recorded in golden/).
local trace_path, out = arg[1], arg[2]
local t = profsh.load(trace_path)
local steps = t:step_breakdown()
steps:to_csv(out .. "/step_breakdown.csv")
steps.average:to_csv(out .. "/step_average.csv")
t:gpu_summary():to_csv(out .. "/gpu_summary.csv")
t:kernel_summary():to_csv(out .. "/kernel_summary.csv")
