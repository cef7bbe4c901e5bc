-- Writes every device-time analysis of a trace as CSV files into a folder, under the names the
-- HTA golden recording uses (check_hta_golden.py compares the two).
local trace_path, out = arg[1], arg[2]
local t = profsh.load(trace_path)
t:temporal_breakdown():to_csv(out .. "/temporal_breakdown.csv")
t:temporal_breakdown{include_last_profiler_step = true}:to_csv(out .. "/temporal_breakdown_last_step.csv")
local by_type, by_kernel = t:kernel_breakdown()
by_type:to_csv(out .. "/kernel_type_breakdown.csv")
by_kernel:to_csv(out .. "/kernel_breakdown.csv")
local idle, stats = t:idle_time_breakdown()
idle:to_csv(out .. "/idle_time_breakdown.csv")
stats:to_csv(out .. "/idle_interval_stats.csv")
t:comm_comp_overlap():to_csv(out .. "/comm_comp_overlap.csv")
local launches = t:kernel_launch_stats()
launches:to_csv(out .. "/kernel_launch_stats.csv")
launches.aten_op_delays:to_csv(out .. "/aten_op_delays.csv")
t:annotation_breakdown():to_csv(out .. "/annotation_breakdown.csv")
t:queue_length_summary():to_csv(out .. "/queue_length_summary.csv")
-- The options beside the defaults, as record_hta_golden.py's ANNOTATION_VARIANTS.
t:annotation_breakdown{use_gpu_annotation = false}:to_csv(out .. "/annotation_breakdown_cpu.csv")
t:annotation_breakdown{num_kernels = 1, allowlist_patterns = {"nccl", "forward"}}
  :to_csv(out .. "/annotation_breakdown_allowlist.csv")
t:annotation_breakdown{use_gpu_annotation = false, num_kernels = 2,
                       allowlist_patterns = {"ProfilerStep", "zero_grad"}}
  :to_csv(out .. "/annotation_breakdown_cpu_allowlist.csv")
