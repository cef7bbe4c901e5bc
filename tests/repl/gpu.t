# A GPU user's session: what each row is, rows that share a name, and which op launched which
# kernel, on a recent Kineto trace (External id links) and the bundled alexnet_a100 (older
# Kineto: only the runtime call's correlation links a kernel to its op).
profsh> t = profsh.load("data/kineto/ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")
profsh> avgs = t:key_averages()
profsh> avgs["DistributedDataParallel.forward"]
2 rows are named 'DistributedDataParallel.forward' (annotation CPU, annotation CUDA): avgs:find("DistributedDataParallel.forward") returns them all, each with its kind and device_type
profsh> avgs["aten::conv2"]
no row is named 'aten::conv2'; did you mean 'aten::conv2d'? (avgs:find(name) returns every row of a name, possibly none)
profsh> avgs["aten::conv2d"].kind, avgs["aten::conv2d"].count
cpu_op	265
profsh> for _, a in ipairs(avgs:find("DistributedDataParallel.forward")) do print(a.kind, a.device_type, a.count) end
annotation	CPU	5
annotation	CUDA	5
profsh> #avgs:find("no such op")
0
profsh> device = {}
profsh> for _, a in ipairs(avgs) do if a.device_type == "CUDA" then device[a.kind] = (device[a.kind] or 0) + a.self_cuda_time_total end end
profsh> string.format("kernel %.3f copy %.3f set %.3f annotation %.3f", device.kernel, device.copy, device.set, device.annotation)
kernel 468153.602 copy 3715.404 set 585.435 annotation 160049.337
profsh> k = t:events{kind = "kernel", limit = 1}[1]
profsh> k.kind, k.cat
kernel	kernel
profsh> op, call = t:launcher(k)
profsh> op.name, op.kind, call.name, call.kind
aten::cat	cpu_op	cudaLaunchKernel	runtime
profsh> #t:kernels(op), t:kernels(op)[1].name == k.name
1	true
profsh> #t:events{pattern = "^aten::conv"}, #t:events{kind = "copy"}
795	1600
profsh> t:events{pattern = "[a"}
stdin:1: bad option 'pattern' to 'events' (malformed pattern (missing ']'))
profsh> a = profsh.load("../scripts/samples/alexnet_a100.pt.trace.json.gz")
profsh> k = a:events{kind = "kernel", limit = 1}[1]
profsh> k.args["External id"] == k.args.correlation
true
profsh> op, call = a:launcher(k)
profsh> op.name, call.name
aten::uniform_	cudaLaunchKernel
profsh> linked = 0
profsh> for _, e in ipairs(a:events{ph = "X"}) do if (e.kind == "kernel" or e.kind == "copy" or e.kind == "set") and a:launcher(e) then linked = linked + 1 end end
profsh> linked, #a:events{kind = "kernel"} + #a:events{kind = "copy"} + #a:events{kind = "set"}
98	98
profsh> a:launcher({})
stdin:1: bad argument #1 to 'launcher' (an event from t:events{} expected: the table has no 'index')
profsh> :quit
