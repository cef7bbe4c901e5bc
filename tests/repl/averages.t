# Averages, sorting, stacks, events and the processes table of a training trace.
profsh> t = profsh.load("golden/cases/mlp_training_stack_flops/trace.json.gz")
profsh> by_shape = t:key_averages{group_by_input_shape=true}
profsh> by_shape.group_by_input_shape, by_shape.profile_memory, by_shape.with_flops
true	true	true
# By input shape, one name has several rows: indexing by the name says so instead of picking one.
profsh> by_shape["aten::addmm"]
2 rows are named 'aten::addmm' (cpu_op CPU x2; grouped by input shape): avgs:find("aten::addmm") returns them all, each with its kind and device_type
profsh> #by_shape:find("aten::addmm"), by_shape:find("aten::addmm")[1].kind
2	cpu_op
profsh> top = by_shape:sorted("flops")[1]
profsh> top.key, top.flops, top.input_shapes
aten::addmm	524288	{{128}, {16, 64}, {64, 128}, {}, {}}
# The TensorBoard plugin's tensor-core columns: addmm is on its list of eligible operators; a
# CPU-only trace has no device time. On the DDP trace (docs/ANALYSIS.md, "Tensor cores on
# key_averages rows") convolution_backward's first call launched no tensor-core kernel.
profsh> top.tc_eligible, top.tc_self_ratio, top.tc_total_ratio
true	0.0	0.0
profsh> ddp = profsh.load("golden/cases/nccl_allreduce_eventlist/trace.json.gz"):key_averages()
profsh> for _, name in ipairs({"aten::cudnn_convolution", "aten::convolution", "aten::convolution_backward"}) do local r = ddp[name] print(name, r.tc_eligible, ("%.2f %.2f"):format(r.tc_self_ratio, r.tc_total_ratio)) end
aten::cudnn_convolution	true	47.24 47.24
aten::convolution	true	0.00 47.24
aten::convolution_backward	false	47.00 47.00
profsh> top
<FunctionEventAvg key=aten::addmm self_cpu_time=210.000us cpu_time=111.500us  self_cuda_time=0.000us cuda_time=0.000us count=2 cpu_memory_usage=16384 cuda_memory_usage=0>
profsh> total = by_shape:total_average()
profsh> total.key, total.count == #t:events{cat="cpu_op"} + #t:events{cat="user_annotation"}
Total	true
profsh> s = t:key_averages{group_by_stack_n=2}:sorted("self_cpu_time_total")[1]
profsh> s.key, s.stack
train_step_0	{"<built-in method _record_function_enter of PyCapsule object at 0x7f11af895560>", "torch/_ops.py(437): __call__"}
# Inputs reach Lua as values (issue 26): a tensor list's shapes as tables (they came as "[2,3]"
# strings), a None as nil (with one, the whole field came as a string); dtypes and concrete inputs too.
profsh> shapes = os.tmpname()
profsh> f = io.open(shapes, "w") f:write('{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::cat", "pid": 1, "tid": 1, "ts": 0, "dur": 5, "args": {"Input Dims": [[[2, 3], [4, 3]], [], null], "Input type": ["TensorList", "Scalar", ""], "Concrete Inputs": ["", "0", "it\'s"]}}]}') f:close()
profsh> cat = profsh.load(shapes):key_averages{group_by_input_shape=true}
profsh> cat[1].input_shapes, cat[1].input_shapes[1][2][1], cat[1].input_types, cat[1].concrete_inputs
{{{2, 3}, {4, 3}}, {}}	4	{"TensorList", "Scalar", ""}	{"", "0", "it's"}
profsh> cat:table():match("%[%[%[.-None%]")
[[[2, 3], [4, 3]], [], None]
profsh> os.remove(shapes)
true
profsh> ev = t:events{name="aten::addmm", limit=1}[1]
profsh> ev.name, ev.cat, ev.ph, ev.args["External id"] ~= nil, ev.args["Input Dims"]
aten::addmm	cpu_op	X	true	{{128}, {16, 64}, {64, 128}, {}, {}}
profsh> #t:events{from=0, to=100}
22
profsh> t:processes()[1].threads[1].events
329
profsh> t:events{limit="all"}
stdin:1: bad option 'limit' to 'events' (integer expected, got string)
profsh> t:export_stacks("/nonexistent-dir/stacks.txt")
stdin:1: /nonexistent-dir/stacks.txt: cannot create output file: No such file or directory
profsh> gpu = os.tmpname()
profsh> f = io.open(gpu, "w") f:write('{"traceEvents": [') for i, r in ipairs{{0, 0, 64}, {1, 0, 4096}, {1, 0, -4096}, {0, 0, -64}, {1, 1, 512}} do f:write((i > 1 and "," or "") .. string.format('{"ph": "i", "name": "[memory]", "pid": 7, "tid": 1, "ts": %d, "args": {"Bytes": %d, "Device Type": %d, "Device Id": %d}}', i, r[3], r[1], r[2])) end f:write("]}") f:close()
profsh> m = profsh.load(gpu):memory_timeline()
profsh> m[2].device, m[2].total, m[5].device, m.peak, m.processes["7"].peak, m.processes["7"].devices["cuda:0"].peak, m.processes["7"].devices["cuda:1"].at_end
cuda:0	4096	cuda:1	64	64	4096	512
profsh> os.remove(gpu)
true
