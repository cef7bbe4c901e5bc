-- Writes trace:memory_summary() and trace:module_summary() of a trace as CSV files into a folder, for
-- check_views_more.py to compare with the TensorBoard plugin's goldens.
local trace_path, out = arg[1], arg[2]
local t = profsh.load(trace_path)
local memory = t:memory_summary()
memory:to_csv(out .. "/memory_operators.csv")
memory.curve:to_csv(out .. "/memory_curve.csv")
memory.allocations:to_csv(out .. "/memory_allocations.csv")
memory.devices:to_csv(out .. "/memory_devices.csv")
t:module_summary():to_csv(out .. "/modules.csv")
