# A first session: load a trace recorded with torch 1.13, look at it, make mistakes.
profsh> t = profsh.load("golden/cases/resnet18_shapes_memory/trace.json.gz")
profsh> t
<profsh.Trace golden/cases/resnet18_shapes_memory/trace.json.gz: 1001 events, 1 process, 1 thread, 15.328 ms>
profsh> #t
1001
profsh> t.format, t.duration
kineto-json	15328.0
profsh> avgs = t:key_averages()
profsh> #avgs
36
profsh> avgs[1].key, avgs[1].count
aten::zeros	6
profsh> avgs:table{sort_by="self_cpu_time_total", row_limit=3}
---------------------------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  
                             Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg       CPU Mem  Self CPU Mem    # of Calls  
---------------------------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  
         aten::mkldnn_convolution        67.39%      10.302ms        67.77%      10.360ms     518.000us     396.00 Kb       8.00 Kb            20  
                  model_inference         9.15%       1.399ms        99.75%      15.249ms      15.249ms          -4 b   -1017.82 Kb             1  
                      aten::addmm         5.89%     901.000us         5.95%     910.000us     910.000us       7.81 Kb       7.81 Kb             1  
---------------------------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  
Self CPU time total: 15.287ms
profsh> profsh.load("no_such_trace.json")
stdin:1: no_such_trace.json: cannot open: No such file or directory
profsh> t:key_averages{group_by_shape=true}
stdin:1: unknown option 'group_by_shape' to 'key_averages' (valid options: group_by_input_shape, group_by_stack_n, torch_format, itt_domains)
profsh> avgs:table{sort_by="cpu_tme"}
stdin:1: unknown sort_by key 'cpu_tme' (valid keys: cpu_time, cuda_time, cpu_time_total, cuda_time_total, self_cpu_time_total, self_cuda_time_total, cpu_memory_usage, cuda_memory_usage, self_cpu_memory_usage, self_cuda_memory_usage, count, flops, self_cpu_samples, cpu_samples, node_id, key, device_time, device_time_total, self_device_time_total, device_memory_usage, self_device_memory_usage, xpu_time, xpu_time_total, self_xpu_time_total, xpu_memory_usage, self_xpu_memory_usage)
profsh> avgs:table{row_limit="ten"}
stdin:1: bad option 'row_limit' to 'table' (integer or false expected, got string)
profsh> function double(x)
>>   return x * 2
>> end
profsh> double(21)
42
profsh> n = 0
profsh> for _, a in ipairs(avgs) do n = n + a.count end
profsh> n
490
profsh> :help key_averages
trace:key_averages{group_by_input_shape=false, group_by_stack_n=0, itt_domains=nil} -> averages list
  Groups operator events by name (and input shapes, and the top N stack frames), as
  torch.profiler's key_averages() does. The list supports #avgs, avgs[i], ipairs(avgs),
  avgs:table{...}, avgs:sorted(key) and avgs:total_average(). See :help avg for the fields.
  Names are not unique keys: a CPU range and its GPU-side annotation share one, and so do an
  op's rows by input shape. avgs["aten::mm"] is the row when exactly one has that name, and
  an error otherwise; avgs:find(name [, kind]) returns every row of the name (maybe none).
  itt_domains: ITT tasks as rows (oneDNN's nest in torch's operators and take their self time):
  nil (all of them in a trace without PyTorch operators; in one with them, as torch's table,
  only torch's own domain "PyTorch"; avgs.itt_tasks_left_out counts those left out), true,
  false, or {"domain", ...}
profsh> :help nothing
no help on 'nothing'; topics: avg, compile, diff, events, export_chrome_trace, export_stacks, flamegraph, flamegraph_diff, flight_recorder, gpu, gpu_events, key_averages, load, memory_timeline, on_demand, processes, profile, pytorch, ranks, recommendations, record_function, repl, report, run, samples, save, schedule, serve, speedscope, sql, table, tensorboard_trace_handler, threads, to_sqlite, trace, whatif
profsh> :quit
