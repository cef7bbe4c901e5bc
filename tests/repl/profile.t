# Attaching to a workload from Lua: a profile runs it, then answers like a trace.
profsh> p = profsh.profile{activities={"nvtx"}}
profsh> p
<profsh.Profile nvtx: not run yet>
profsh> p:key_averages()
stdin:1: the profile has not run yet: call p:run{...} before p:key_averages()
profsh> p:run(profsh.executable_dir .. "/nvtx_pipeline 2 > /dev/null")
0
profsh> p.exit_code, p.summary.ranges, p.summary.dropped_ranges
0	252	0
profsh> for _, a in ipairs(p:key_averages()) do if a.key == "matmul_tile" or a.key == "iteration" then print(a.key, a.count) end end
iteration	2
matmul_tile	220
profsh> p:run{"sh", "-c", "exit 5"}
5
profsh> p.summary.text
1 process, 0 threads, 0 ranges, 0 marks; [0-9]+ bytes of streams; nothing dropped (re)
profsh> p:run{}
stdin:1: bad argument #1 to 'run' (the command list is empty)
profsh> profsh.profile{activities={"cupti"}}
stdin:1: unknown activity 'cupti' in 'profile' (activities: nvtx, itt)
profsh> profsh.profile{buffer="big"}
stdin:1: unknown option 'buffer' to 'profile' (valid options: activities, buffer_kb, drain_ms, keep_session, schedule, on_trace_ready, step_marker, capture_range); did you mean 'buffer_kb'?
