-- Loads a trace and runs every device-time analysis once (the benchmark's profsh side; HTA's
-- side is bench/hta_all.py).
local t = profsh.load(arg[1])
local temporal = t:temporal_breakdown()
local by_type, by_kernel = t:kernel_breakdown()
local idle, stats = t:idle_time_breakdown()
local overlap = t:comm_comp_overlap()
local launches = t:kernel_launch_stats()
local annotations = t:annotation_breakdown()
print(string.format("profsh: %d events, %d kernel rows, %d launches, %d idle rows", #t,
                    #by_kernel, #launches, #idle))
