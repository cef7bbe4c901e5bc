# `profsh critical-path` on the synthetic two-rank job of tests/critical_path_ranks (rank 1
# runs a 500 us aten::index_put_ before each all-reduce): linked, rank 0's path names rank 1's
# operator; one rank alone, HTA's path; errors. Then scripts/critical_path.lua: each kernel
# made 2x faster, what the step gains (the GEMMs are off the path and gain nothing).
$ cd $TESTS/critical_path_ranks/data && profsh critical-path rank-0.json rank-1.json --rank 0 --top 3
critical path of 2 ranks' traces, ProfilerStep#0: 564.000 us of 729.000 us, 2 ranks linked at 1 collective(s), ending on rank 0

bound by:
bound_by                         pct  duration_us
                                 0.0          0.0
cpu_bound                    94.1489        531.0
gpu_communication_bound      5.31915         30.0
gpu_kernel_launch_overhead  0.531915          3.0

top contributors:
rank  name                                                                             bound_by                 edges  duration    pct
   1  aten::index_put_                                                                 cpu_bound                    1   500.000  88.65
   0  ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)  gpu_communication_bound      1    30.000   5.32
   1  aten::mm                                                                         cpu_bound                    6    21.000   3.72
note: 2 ranks linked at 1 collective(s)
$ cd $TESTS/critical_path_ranks/data && profsh critical-path rank-0.json --step 1 --top 2
critical path of rank-0.json, ProfilerStep#1: 566.000 us of 729.000 us, rank 0

bound by:
bound_by                         pct  duration_us
                                 0.0          0.0
cpu_bound                    5.47703         31.0
gpu_communication_bound      93.9929        532.0
gpu_kernel_launch_overhead  0.530035          3.0

top contributors:
rank  name                                                                             bound_by                 edges  duration    pct
   0  ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)  gpu_communication_bound      1   532.000  93.99
   0  aten::mm                                                                         cpu_bound                    6    21.000   3.71
$ cd $TESTS/critical_path_ranks/data && profsh critical-path rank-0.json --step 9
profsh critical-path: rank-0.json has no ProfilerStep#9 (its steps: ProfilerStep#0 to ProfilerStep#1)
[1]
$ profsh critical-path --top x
profsh critical-path: --top needs a non-negative whole number, got 'x'
(profsh critical-path --help lists the options)
[2]
$ cd $TESTS/critical_path_ranks/data && profsh $TESTS/../scripts/critical_path.lua rank-0.json ProfilerStep 0
critical path of ProfilerStep #0: 566.000 us
bound_by                         pct  duration_us
                                 0.0          0.0
cpu_bound                    5.47703         31.0
gpu_communication_bound      93.9929        532.0
gpu_kernel_launch_overhead  0.530035          3.0

rank  name                                                                             bound_by                    edges  duration    pct
   0  ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)  gpu_communication_bound         1   532.000  93.99
   0  aten::mm                                                                         cpu_bound                       6    21.000   3.71
   0  cudaLaunchKernel                                                                 cpu_bound                       3     9.000   1.59
   0  (critical_path_kernel_launch_delay)                                              gpu_kernel_launch_overhead      1     3.000   0.53
   0  record_param_comms                                                               cpu_bound                       1     1.000   0.18


kernel made 2x faster                                           kernel us      step us    gain us   gain %
ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsign      532.000      300.000    266.000   47.00%
sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_sta      100.000      566.000      0.000    0.00%
sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x32_sta       50.000      566.000      0.000    0.00%
