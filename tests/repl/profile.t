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
profsh> counts = {}; for _, a in ipairs(p:key_averages()) do counts[a.key] = a.count end
profsh> counts.iteration, counts.matmul_tile
2	220
profsh> p:run{"sh", "-c", "exit 5"}
5
profsh> p.summary.text
1 process, 0 threads, 0 ranges, 0 marks; [0-9]+ bytes of streams; nothing dropped (re)
profsh> p:run{}
stdin:1: bad argument #1 to 'run' (the command list is empty)
profsh> profsh.profile{activities={"cupti"}}
stdin:1: unknown activity 'cupti' in 'profile' (activities: nvtx, itt, torch, cuda, cpu)
profsh> profsh.profile{buffer="big"}
stdin:1: unknown option 'buffer' to 'profile' (valid options: activities, buffer_kb, drain_ms, keep_session, schedule, on_trace_ready, step_marker, capture_range, record_shapes, with_stack, with_flops, profile_memory, sample_rate, sample_stack_bytes, sample_event, cupti, gpu_wait_ms, flight_recorder, trigger, watchdog); did you mean 'buffer_kb'?
profsh> profsh.profile{sample_event="instructions"}
stdin:1: bad option 'sample_event' to 'profile' ('auto', 'cycles' or 'cpu-clock' expected, got 'instructions')
profsh> profsh.profile{with_stack="python"}
stdin:1: bad option 'with_stack' to 'profile' (true, "lines" or "torch" expected, got "python")
profsh> profsh.profile{with_stack=1}
stdin:1: bad option 'with_stack' to 'profile' (true, "lines" or "torch" expected, got number)
profsh> s = profsh.schedule{wait=1, warmup=1, active=2, ["repeat"]=1}
profsh> s
<profsh.Schedule skip_first=0, wait=1, warmup=1, active=2, repeat=1>
profsh> s(0), s(1), s(2), s(3), s(4)
NONE	WARMUP	RECORD	RECORD_AND_SAVE	NONE
profsh> profsh.schedule{active=0}
stdin:1: Invalid profiler schedule arguments (wait >= 0, warmup >= 0, active > 0, repeat >= 0, skip_first >= 0)
profsh> seen = {}
profsh> q = profsh.profile{schedule=s, on_trace_ready=function(t) seen[#seen + 1] = t.steps[1] .. "-" .. t.steps[2] end}
profsh> q:start()
<profsh.Profile nvtx,itt,torch: recording in this process, step 0>
profsh> for i = 0, 5 do profsh.record_function("step " .. i, function() end) q:step() end
profsh> q:stop()
profsh> seen[1], #seen
2-3	1
profsh> q:key_averages()[1].key, q:key_averages()[1].count
step 2	1
profsh> profsh.profile{schedule=s, capture_range="x"}
stdin:1: 'profile' takes a schedule or a capture_range, not both
