# t:critical_path: HTA's critical path of a step, its summary and breakdown, the errors, and the note on a trace without CUDA synchronization events.
profsh> t = profsh.load("data/kineto/critical_path_cuda_event_sync_event_sync_trace.json.gz")
profsh> cp = t:critical_path{annotation = "ProfilerStep", instance = 0}
profsh> cp
CriticalPath(2411.0 us, 39 of the graph's 57 edges)
profsh> cp.duration, #cp.nodes, #cp.edges, #cp.graph, #cp.graph.nodes
2411.0	40	39	57	56
profsh> cp:summary()
bound_by                         pct  duration_us
                                 0.0          0.0
cpu_bound                    98.0921       2365.0
gpu_compute_bound            1.49316         36.0
gpu_kernel_launch_overhead  0.414766         10.0
profsh> b = cp:breakdown()
profsh> b[1].name, b[1].type, b[1].duration, b[1].bound_by
aten::ones	critical_path_operator	4.0	cpu_bound
profsh> cp.nodes[1].name, cp.nodes[1].is_start
aten::ones	1
profsh> t:critical_path{annotation = "ProfilerStep", instance = {0, 5}}
CriticalPath(2411.0 us, 39 of the graph's 57 edges)
profsh> t:critical_path{annotation = "NoSuchStep"}
stdin:1: critical_path: no event's name contains the annotation "NoSuchStep"
profsh> t:critical_path{instance = "one"}
stdin:1: bad option 'instance' to 'critical_path' (an instance number or {first, last} expected)
profsh> t:critical_path{rounding = "up"}
stdin:1: bad option 'rounding' to 'critical_path' ("exact" or "hta" expected, got "up")
profsh> n = profsh.load("data/kineto/execution_trace_benchmark_simple_add_trace.json.gz"):critical_path{annotation = ""}
profsh> n.duration
19677223.0
profsh> n.notes[1]
the trace has no CUDA synchronization events (category cuda_sync): the path cannot follow the CPU's waits for the GPU (cudaStreamSynchronize, cudaEventSynchronize, cudaDeviceSynchronize) or one stream's wait for another, so it may run through the waiting call instead of the GPU work it waited for. `profsh run` records them through CUPTI; torch.profiler records them with experimental_config=torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True) (PyTorch 2.1 and later).
