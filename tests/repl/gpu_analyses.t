# HTA's analyses in the shell: rows print as tables, fields read as values, notes say why rows are missing.
profsh> t = profsh.load("data/kineto/execution_trace_benchmark_simple_add_trace.json.gz")
profsh> t:temporal_breakdown()
rank  kernel_time  idle_time  compute_time  non_compute_time  idle_time_pctg  compute_time_pctg  non_compute_time_pctg  exposed_comm_time  exposed_memory_time
   0       108919     108903            16                 0           99.99               0.01                    0.0                  0                    0
profsh> t:comm_comp_overlap()
rank  comp_comm_overlap_pctg
   0                        
note: no communication kernels on rank 0: the overlap is undefined (HTA prints NaN)
profsh> rows = t:idle_time_breakdown{consecutive_kernel_delay = 5}
profsh> rows
rank  stream  idle_category  idle_time  idle_time_ratio
   0       7  host_wait         108901              1.0
   0       7  kernel_wait            2              0.0
   0       7  other                  0              0.0
profsh> rows[1].idle_category, rows[1].idle_time
host_wait	108901
profsh> t:kernel_breakdown{num_kernels = "ten"}
stdin:1: bad option 'num_kernels' to 'kernel_breakdown' (integer expected, got string)
profsh> profsh.load("data/kineto/cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"):temporal_breakdown()
rank  kernel_time  idle_time  compute_time  non_compute_time  idle_time_pctg  compute_time_pctg  non_compute_time_pctg  exposed_comm_time  exposed_memory_time
note: the trace has no device work (kernels, copies, sets)
