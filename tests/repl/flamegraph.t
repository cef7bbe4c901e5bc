# Flamegraphs without Perl: from a trace, from torch's folded stacks, and the change between two.
profsh> t = profsh.load("golden/cases/mlp_training_stack_flops/trace.json.gz")
profsh> out = os.tmpname()
profsh> t:flamegraph(out, {stacks="operators"})
{frames = 86, ignored_lines = 0, stacks = 104, total = 1895.0}
profsh> t:flamegraph(out, {stacks="operators", minwidth=0.1})
{frames = 107, ignored_lines = 0, stacks = 104, total = 1895.0}
profsh> io.open(out):read("a"):match("<title>(aten::addmm [^<]*)</title>")
aten::addmm (142 us, 7.49%)
profsh> t:flamegraph(out, {stacks="python", metric="count", minwidth="1%"})
{backward = {events = 0, value = 0.0}, frames = 42, ignored_lines = 0, inherited = {events = 16, value = 16.0}, stacks = 14, total = 246.0, unstacked = {events = 0, value = 0.0}}
profsh> t:flamegraph(out, {colors="purpel"})
stdin:1: unknown colour palette 'purpel' (palettes: hot, mem, io, java, torch, red, green, blue, yellow, purple, aqua, orange)
profsh> t:flamegraph(out, {minwidth="wide"})
stdin:1: bad option 'minwidth' (a number of pixels, or a percentage like "0.5%", expected)
profsh> t:flamegraph(out, {metric="self_gpu_time"})
stdin:1: unknown flamegraph metric 'self_gpu_time' (metrics: self_cpu_time_total, self_cuda_time_total, self_cpu_memory_usage, count)
profsh> t:flamegraph(out, {stacks="operators", metric="self_cuda_time_total"})
stdin:1: nothing to draw: no event has a positive self_cuda_time_total
profsh> folded = os.tmpname()
profsh> t:export_stacks(folded, "self_cpu_time_total")
profsh> profsh.flamegraph(folded, out, {title="MLP training", reverse=true})
{frames = 42, ignored_lines = 0, stacks = 14, total = 1862.0}
profsh> profsh.flamegraph_diff(folded, t, out)
{frames = 42, ignored_lines = 0, stacks = 14, total = 1887.0}
profsh> profsh.flamegraph(42, out)
stdin:1: bad argument #1 to 'flamegraph' (input: a Trace or a file path expected, got number)
profsh> profsh.flamegraph("no_such.folded", out)
stdin:1: no_such.folded: cannot open: No such file or directory
profsh> profsh.speedscope(t, out)
profsh> io.open(out):read("a"):sub(1, 60)
{"$schema": "https://www.speedscope.app/file-format-schema.j
profsh> os.remove(out), os.remove(folded)
true	true
profsh> :help flamegraph_diff
profsh.flamegraph_diff(before, after, path, {normalize=false, negate=false, ...}) -> summary
  A differential flamegraph, as difffolded.pl + flamegraph.pl draw it: widths from `after`,
  colour from each frame's change (red grew, blue shrank; negate swaps them), the change in
  the tooltip. before/after: Traces, trace files or folded files. normalize scales `before`
  to `after`'s total first. Threads are matched by name and rank (thread_frames="names"):
  two runs have different pids. Other options as for flamegraph.
