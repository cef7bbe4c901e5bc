-- Loads a trace and computes every TensorBoard view once (the benchmark's profsh side; the
-- plugin's side is bench/tb_plugin_load.py).
local t = profsh.load(arg[1])
local counts = {}
for _, view in ipairs({"step_breakdown", "gpu_summary", "kernel_summary", "memory_summary",
                       "distributed_summary", "module_summary", "recommendations"}) do
  counts[#counts + 1] = view .. " " .. #t[view](t)
end
local operators = t:key_averages()
counts[#counts + 1] = "operators " .. #operators
print("profsh: " .. #t .. " events; " .. table.concat(counts, ", "))
