-- The Lua half of the profsh module, embedded in the binary. It receives the table the C++
-- bindings filled (load, the Trace and Averages types) and adds what is easier said in Lua:
-- help texts and the value printer the REPL uses.
local profsh = ...

local topics = {}
profsh.help_topics = topics

topics[""] = [[
profsh — a programmable profiling shell.

  t = profsh.load("trace.json.gz")     load a Kineto / Chrome / PyTorch trace or a profsh file
  avgs = t:key_averages()              operator statistics, as torch.profiler computes them
  print(avgs:table{sort_by="self_cpu_time_total", row_limit=10})
  t:export_chrome_trace("out.json")    Chrome/Perfetto trace
  t:export_stacks("stacks.txt", "self_cpu_time_total")
  t:save("trace.profsh")               compact binary, fast to load again
  t:to_sqlite("trace.sqlite")          SQLite with Perfetto's table names; t:sql("SELECT ...")
  t:flamegraph("ops.svg")              interactive flamegraph SVG (no Perl needed)
  p = profsh.profile{activities={"nvtx","itt"}}
  p:run{"bash", "launch.sh"}           run a workload with the collector attached
  print(p:key_averages():table())      the profile then answers like a trace

Help topics: load, key_averages, table, avg, trace, events, gpu, processes, threads,
export_chrome_trace, export_stacks, save, to_sqlite, sql, flamegraph, flamegraph_diff,
diff, speedscope, profile, run, pytorch, memory_timeline, schedule, record_function, on_demand,
flight_recorder, tensorboard_trace_handler, gpu_events, compile, recommendations, ranks, report,
samples, serve, repl.
Type :help TOPIC]]

topics.load = [[
profsh.load(path) -> Trace
  Reads a trace; the format is detected from the content, not the name:
    - Kineto JSON ({"traceEvents": [...]}), absolute integer microseconds or relative
      microseconds with "baseTimeNanoseconds"
    - PyTorch's legacy export (a bare JSON array, pid "CPU functions")
    - profsh's own binary format (trace:save)
  Any of them may be gzip-compressed. Errors name the file and the line/column or field.]]

topics.key_averages = [[
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
  false, or {"domain", ...}]]

topics.table = [[
avgs:table{sort_by=nil, row_limit=100, max_name_column_width=55, max_shapes_column_width=80,
           max_src_column_width=75, header=nil, top_level_events_only=false, time_unit=nil}
  Returns PyTorch 1.13's table text, byte for byte. sort_by takes every key torch takes:
  cpu_time, cuda_time, cpu_time_total, cuda_time_total, self_cpu_time_total,
  self_cuda_time_total, cpu_memory_usage, cuda_memory_usage, self_cpu_memory_usage,
  self_cuda_memory_usage, count, flops, key (and the device_/xpu_ spellings).
  Pass false for a width or row_limit to mean None (no limit). time_unit: "s", "ms", "us".]]

topics.avg = [[
Fields of an averages element (times in microseconds):
  key, count, cpu_time_total, self_cpu_time_total, cpu_time, cuda_time_total,
  self_cuda_time_total, cuda_time, cpu_memory_usage, self_cpu_memory_usage,
  cuda_memory_usage, self_cuda_memory_usage, input_shapes, stack, flops, device_type,
  is_async, kind
  Grouped by input shape, input_shapes, input_types and concrete_inputs are the first event's
  recorded inputs as tables ({{2, 3}, {}}; a tensor list's shapes as a table of tables).
  kind says what the row's events are: "cpu_op", "annotation" (record_function or other
  user ranges, and their gpu_user_annotation spans: device_type "CUDA"), "runtime"
  (cudaLaunchKernel, ...), "kernel", "copy", "set" (memcpy/memset on the device), "memory"
  (allocations no op held). Device work is kernel + copy + set; annotations cover it again.
  tc_eligible, tc_self_ratio, tc_total_ratio: the TensorBoard plugin's operator view's tensor-core
  columns. The share (percent) of self_cuda_time_total and of cuda_time_total spent in kernels
  using tensor cores, and whether the row's first event is eligible for them (its name is on
  the plugin's list, it launched such a kernel, or an op inside it is eligible).]]

topics.trace = [[
Trace fields: duration (us), start (absolute us), path, format, event_count, warnings,
metadata.  Methods: key_averages, table via averages, events, processes, threads,
launcher, kernels (:help gpu_events), export_chrome_trace, export_stacks, save, to_sqlite, sql,
flamegraph, export_speedscope.
#trace is the number of events.]]

topics.events = [[
trace:events{name=, pattern=, kind=, cat=, ph=, pid=, tid=, from=, to=, limit=} -> events
  Each event: name, cat, kind, ph, pid, tid, ts, dur (us; ts from the start of the trace),
  args, index (its place in the trace, for t:launcher and t:kernels), and event-level
  fields such as id. name matches exactly, pattern is a Lua pattern (string.find:
  pattern="^aten::conv"), from/to select events overlapping [from, to].
  kind: cpu_op, annotation, runtime, kernel, copy, set, memory, other (see :help avg).
  cat is the category the trace gives: Kineto writes cpu_op, user_annotation,
  python_function, cuda_runtime, cuda_driver, kernel, gpu_memcpy, gpu_memset,
  gpu_user_annotation, ac2g (flows); profsh's own recordings nvtx, itt, torch domains.
  ph: "X" complete, "i" instant, "C" counter, "M" metadata, "s"/"f" flows.]]

topics.gpu_events = [[
GPU traces (Kineto, recorded with ProfilerActivity.CUDA):
  kernels, copies and sets run on a stream: pid = the device, tid = the stream
  (t:threads() lists them); each has args "correlation" (its runtime call) and, in newer
  Kineto, "External id" (the CPU op). gpu_user_annotation spans mirror user ranges on the
  device. cuda_runtime events (cudaLaunchKernel, cudaMemcpyAsync) sit on the CPU thread.
  k = t:events{kind="kernel"}[1]
  op, call = t:launcher(k)   -- the CPU op that launched it, and the runtime call
  t:kernels(op)              -- the kernels, copies and sets an op launched itself
  The link follows both Kineto conventions: External id naming the op (newer), or the
  runtime call with the same correlation, inside the op (older: the bundled alexnet_a100,
  where joining on External id finds nothing). key_averages adds each kernel's time to its
  op's self_cuda_time_total; rows with device_type "CUDA" are the kernels themselves.
  scripts/gpu_kernels.lua: device time per op, top kernels, who launched the longest.]]

topics.compile = [[
What torch.compile did (PyTorch 2.2+: torch.profiler's traces and profsh run --activities
torch recordings; docs/ANALYSIS.md defines every column; compile time is a union of spans):
  t:compile_regions()   per "Torch-Compiled Region: F/R", pass (forward/backward) and step:
                        calls, cpu_time, compile_time, kernels, gpu_busy, gpu_idle, depth
                        (>= 1: a graph break), host_wait_share, mean_launch_delay,
                        short_kernels, verdict ("CPU-bound: consider CUDA graphs ...")
  g = t:graph_breaks()  per step: step_time, compile_time, run_time, guard_time, regions,
                        graph_breaks, recompiles, eager_islands, eager_time; a row with no
                        step: the time outside every step (the whole trace without steps)
    g.islands           runs of eager operators: step, tid, start, duration, op_time, ops,
                        first_op, last_op, region, stack
    g.recompiles        frame, recompile, region, step, start, compile_time
  t:kernel_provenance() kernel time by origin: inductor pointwise/reduction/persistent/template,
                        ATen fallbacks, cuBLAS, cuDNN, CUTLASS, flash attention, NCCL, CUDA
                        graph replays; Inductor's C++ kernels on the CPU
  Recipe: scripts/torch_compile.lua]]

topics.recommendations = [[
What to change, read off a trace (docs/ANALYSIS.md "Recommendations"):
  r = t:recommendations{gpu_gap_us=1000, min_short_kernels=10, short_kernel_share=0.25,
                        evidence_names=5}
  rows of rule, source ("plugin" or "profsh"), text, evidence (the operators or kernels
  concerned, with their times), time_at_stake (us).
  The TensorBoard plugin's rules, at its thresholds: dataloader, data_parallel, ddp_backend,
  communication, low_gpu_utilization, tensor_cores, memory_peak. profsh's own, where the trace
  shows the cause: pageable_memcpy, sync_memcpy, sync_in_step, gpu_gap, short_kernels,
  recompiles. Command line: profsh overview TRACE.]]

topics.ranks = [[
A distributed job's traces as one (docs/ANALYSIS.md "Many ranks"):
  t = profsh.load_ranks("dir" | "glob*.json.gz" | {paths}, {align="min", ranks={["f"]=N},
                        allow_missing=false, threads=0})
    align: "abs" (recorded clocks), "min" (first events together, as HTA), "step" (the first
    common ProfilerStep), "collective" (matched collectives end together)
  t.ranks              {{rank, path, offset, events}, ..., align=, skew_median=, skew_max=}
  c = t:collectives()  per collective call: group, name, seq, rank, start, end, duration,
                       arrival_skew, wait, last; c.ranks per rank; c.straggler
  HTA's analyses give one set of rows per rank; rows:across_ranks() shows min / median / max
  and the rank of the max of every numeric column. `profsh run` of a torchrun job labels each
  process with its RANK: the same works on that trace.
  From rank summaries (profsh summarize), without the traces:
  j = profsh.load_summaries("dir" | "glob*.sqlite" | {paths}, {align="min", allow_missing=false})
  j.ranks, j:collectives(), j:temporal_breakdown{by_step=}, j:comm_comp_overlap(),
  j:step_breakdown() as on load_ranks; j:step_times(), j:slowest_ranks() (per step),
  j:drifting_ranks() (step time slope out of line with the others').]]

topics.whatif = [[
The critical path across ranks and what-if (docs/ANALYSIS.md "Critical path across ranks"):
  cp = t:critical_path{annotation=, instance=, rank=N, link_ranks=true}
    on a job (load_ranks, or a trace of several ranks) every rank's graph is linked at the
    collectives; rank = N: the path that ends on rank N; link_ranks = false: rank N alone
  cp:breakdown()      has a rank column on a job; cp:contributors(n) the path's time per
                      rank, name and bound_by (n = 10; 0 for all)
  w = cp:whatif{ {kernel = "pattern", scale = 0.5}, {op = "aten::copy_", remove = true},
                 {sync = "cudaStreamSynchronize", remove = true}, {rank = 3, scale = 0.9} }
    names are Lua patterns (string.find); rank = N beside kernel/op/sync limits the change
    w.duration, w.baseline, w.gain (us), w.changes, w.nodes, w.edges, w:summary(),
    w:breakdown(), w:contributors(n), w:whatif{...} (changes it further)
  t:export_chrome_trace(path, {critical_path = cp or w})   the path as flow events
  profsh critical-path TRACE... [--step N|all] [--rank N]; scripts/critical_path.lua]]

topics.processes = [[
trace:processes() -> list of {pid, name, labels, sort_index, threads={{tid, name, events}}}]]

topics.threads = [[
trace:threads() -> list of {pid, tid, name, sort_index, events}]]

topics.export_chrome_trace = [[
trace:export_chrome_trace(path)
  Writes Chrome Trace Event JSON (Kineto layout) that Perfetto UI and chrome://tracing open,
  with categories, args, flows, process and thread names. A path ending in .gz is gzipped.
  The file appears atomically (written to a temporary file, then renamed).]]

topics.export_stacks = [[
trace:export_stacks(path, metric="self_cpu_time_total")
  torch's folded stacks: "outermost;...;innermost value" per event with a stack.
  metric: self_cpu_time_total or self_cuda_time_total.]]

topics.save = [[
trace:save(path)
  profsh's binary format: compact, versioned, and much faster to load than JSON.]]

topics.to_sqlite = [[
trace:to_sqlite(path)
  Writes a SQLite database with Perfetto trace processor's tables, columns and ids (slice,
  track, thread_track, process_track, counter_track, process_counter_track, thread, process,
  args, flow, counter, stats, metadata, the slices.with_context views; ts and dur in ns) and
  profsh's own: kernel (device work with its launch and operator slice ids), memory
  ([memory] records), op (key_averages rows). Any SQLite client reads it; the file appears
  atomically. profsh export --sqlite OUT TRACE does the same from the shell.]]

topics.sql = [[
trace:sql(query) -> rows
  Runs one SQL statement over the tables trace:to_sqlite writes and returns its rows
  (rows:table(), rows:to_csv(path)). The database is built in memory by the trace's first
  query and kept for the next ones (TEMP tables and views a query makes stay too). Perfetto's
  extract_arg, ancestor_slice, descendant_slice, directly_connected_flow, following_flow and
  preceding_flow work, and a query may start with INCLUDE PERFETTO MODULE slices.with_context;
  profsh sql TRACE QUERY does the same from the shell.
    t:sql("SELECT name, count(*) AS n, sum(dur) AS total FROM slice GROUP BY name")]]

topics.flamegraph = [[
trace:flamegraph(path, {metric="self_cpu_time_total", stacks="auto", ...}) -> summary
profsh.flamegraph(input, path, {...}) -> summary
  Writes a self-contained interactive SVG: click a frame to zoom, Escape or "Reset Zoom" to
  go back, Ctrl-F or "Search" for a regular expression (matches turn purple, with their share
  of the visible width), the frame under the mouse described at the bottom.
  input: a Trace, a trace file, or a folded-stack file ("a;b;c 12" per line, as
  flamegraph.pl's stackcollapse, inferno and torch's export_stacks write).
  Trace options: metric = self_cpu_time_total | self_cuda_time_total |
  self_cpu_memory_usage | count;  stacks = "python" (recorded with_stack) | "operators" (the
  nesting of operators and ranges) | "auto" (python when present). Python stacks: an event
  without a stack of its own is drawn under its enclosing operator's, backward code that no
  forward stack reached under [backward], the rest under [no Python stack] (each with the
  operator's name), so the graph adds up to the metric's total;  threads = true/false
  (a root frame per thread);  thread_frames = "pids" (its name and pid, the default) |
  "names" (its name and rank: what matches another run's; flamegraph_diff's default).
  Drawing options: title, subtitle, width=1200, height=16 (per frame), font_size=12,
  minwidth="0.2%" (of the total, or a number of pixels: flamegraph.pl's is 0.1), colors="hot"
  (mem, io, java, torch, red,
  green, blue, yellow, purple, aqua, orange), reverse=false (true: icicle),
  count_name (default: the metric's unit, or "samples").
  summary = {stacks=, frames=, total=, ignored_lines=}; of a trace's Python stacks also
  inherited, backward, unstacked = {events=, value=} and note (what had no stack, if any).
  Command line: profsh flamegraph INPUT -o OUT.svg   (profsh flamegraph --help)]]

topics.flamegraph_diff = [[
profsh.flamegraph_diff(before, after, path, {normalize=false, negate=false, ...}) -> summary
  A differential flamegraph, as difffolded.pl + flamegraph.pl draw it: widths from `after`,
  colour from each frame's change (red grew, blue shrank; negate swaps them), the change in
  the tooltip. before/after: Traces, trace files or folded files. normalize scales `before`
  to `after`'s total first. Threads are matched by name and rank (thread_frames="names"):
  two runs have different pids. Other options as for flamegraph.]]

topics.diff = [[
profsh.diff(control, test, {device="all", by="name", step=nil, control_step=nil,
            test_step=nil, sort="name", min_change=0, row_limit=0}) -> rows
  Two traces side by side, as HTA's TraceDiff.compare_traces and ops_diff: per name,
  control_counts, control_total_duration, test_counts, test_total_duration, diff_counts,
  diff_duration (us, HTA's rounding), counts_change_categories ("+", "-", "=") and change:
  added, deleted, increased, decreased or unchanged. d.added ... d.unchanged are those rows.
  control/test: Traces or trace files. Each takes part with one ProfilerStep: its first
  (HTA's default) unless step (both) or control_step / test_step give a number; "whole" (or a
  trace without steps, which HTA refuses) compares the whole trace; d.notes says which.
  device: "all", "cpu" (events without a stream: operators, runtime calls, annotations) or
  "gpu" (events on a stream: kernels, copies, sets, gpu_user_annotation). by="short_name"
  groups by HTA's shortened names (no arguments or template parameters).
  HTA's groups go by counts alone; to see what changed in time: sort="diff_duration" (or
  "diff_counts": by the size of the change, largest first), "control_total_duration",
  "test_total_duration", "control_counts", "test_counts" (largest first), "name" (HTA's order);
  min_change=N leaves out rows whose change is below N (|diff_counts| when sorting by counts,
  else |diff_duration| in us); row_limit=N keeps the first N. d.notes says what was left out.
    d = profsh.diff("before.json.gz", "after.json.gz", {device="gpu"})
    print(d.increased:table())
  Command line: profsh diff CONTROL TEST --device gpu --step 5   (profsh diff --help)]]

topics.speedscope = [[
trace:export_speedscope(path, {metric=, stacks=, threads=, name=})
profsh.speedscope(input, path, {name=, unit=, metric=, stacks=})
  Writes speedscope's JSON format (a sampled profile with shared frames) for
  https://www.speedscope.app or its desktop build.]]

topics.profile = [[
p = profsh.profile{activities={"nvtx","itt","torch","cuda"}, record_shapes=false, with_stack=false,
                   with_flops=false, profile_memory=false, schedule=nil, on_trace_ready=nil,
                   step_marker=nil, capture_range=nil, buffer_kb=8192, drain_ms=20,
                   keep_session=false, sample_rate=999, sample_stack_bytes=8192, sample_event="auto",
                   cupti=nil, gpu_wait_ms=10000, flight_recorder=nil, trigger=nil}
status = p:run{"bash", "launch.sh"}     or  p:run("shell command line")
  Runs an unmodified workload, and every process it starts, with profsh's collector injected
  (LD_PRELOAD, NVTX_INJECTION64_PATH, INTEL_LIBITTNOTIFY64) and returns its exit status.
  Collected: NVTX ranges (push/pop, start/end across threads, marks, domains, categories,
  colors, payloads, registered strings, thread names), ITT tasks, frames, markers,
  counters, thread names and pause/resume, and (torch) PyTorch operators in Python
  processes that import torch, with what torch.profiler's options of the same names add:
  input shapes and dtypes, Python stacks with nn.Module frames, FLOPs, and memory
  (:help pytorch, :help memory_timeline). cuda (on by default where libcuda.so.1 loads):
  kernels, copies, memsets, CUDA calls, syncs and GPU memory through CUPTI (cupti= names
  libcupti; default: beside the CUDA toolkit), as Kineto's events: CUDA columns per range and
  op. Tested against a test CUDA driver and CUPTI only, not yet on a GPU.
  With schedule= or capture_range= and on_trace_ready=, windows are handed over while the
  workload runs (:help schedule); with cuda, a window waits until every kernel, copy and set
  launched in it has reported, at most gpu_wait_ms after its end (launches still missing then
  are counted in p.summary.gpu_launches_unreported). p:start(), p:step(), p:stop() profile Lua code itself.
  Afterwards p answers what a Trace answers: p:key_averages(), p:export_chrome_trace(path),
  p:flamegraph(path), p:save(path), p.duration, p.warnings ... and also
  p.exit_code, p.signal, p.windows, p.summary (ranges, operators, drops, memory_peak, ...;
  summary.text says it in a line; when the step marker never matched,
  summary.names_before_first_step = {{name=, count=}, ...}, the range names met most often),
  p.trace (the Trace itself), p.session (the raw streams' folder, with keep_session=true).
  An injection variable another tool already set is left alone; p.warnings says so.
  Nothing is dropped silently: drops, unbalanced pops and cut streams are counted in
  p.summary and the trace's warnings.]]

topics.pytorch = [[
PyTorch scripts, unchanged:   profsh run --record-shapes --with-stack -- python3 train.py
  With the torch activity (on by default), profsh puts a start-up hook on the Python path
  (an existing sitecustomize still runs); once the script imports torch, it loads profsh's
  operator source, which registers global RecordFunction callbacks. Each operator and
  record_function range is recorded with its thread, sequence number and forward thread, so
  backward operators link to their forward ones (a "fwdbwd" flow in the Chrome export), and
    record_shapes=true    input shapes and dtypes (key_averages{group_by_input_shape=true})
    with_stack=true       the Python stack, read from the interpreter's frames in the callback,
                          "file.py(line): func" and "nn.Module: Name_N" (group_by_stack_n),
                          each frame at the line it is executing (also with_stack="lines")
    with_stack="torch"    the stack in torch 1.13's form, so group_by_stack_n groups as torch's:
                          functions at the line they were entered at (their def line), frames
                          running when recording began at their line then, C functions as
                          frames ("<built-in method zeros of type object at 0x...>", the
                          address differing per process); only the thread that imported torch,
                          as torch's tracer; costs a profile hook on that thread's every call
    with_flops=true       FLOPs of the operators torch counts (conv, mm, addmm, bmm, mul, add)
    profile_memory=true   c10's CPU tensor allocations, attributed as torch does (and every
                          allocation of the command and torch programs; profile_memory="all":
                          of every process, below)
  Operators announced through emit_itt/emit_nvtx in builds that have them are ITT/NVTX ranges.
  Recipes: scripts/resnet18_*.lua (the PyTorch profiler recipe), scripts/itt_sample.lua.]]

topics.samples = [[
p = profsh.profile{activities={"nvtx","itt","torch","cpu"}, sample_rate=999}
                                      |   profsh run --activities nvtx,itt,torch,cpu -- CMD
  Samples every thread of every process of the workload on its CPU time, with native stacks:
  perf_event_open from profsh (the CPU clock; hardware cycles where present), or where the
  kernel forbids it a CPU-time timer per thread inside the collector (p.summary.sampling_method
  says which, and why). Stacks are unwound (DWARF CFI or frame pointers) and symbolised when
  the session is read; each sample belongs to the ranges open on its thread then.
t:samples{range=nil, limit=nil}        ts, pid, tid, function, module, nvtx, itt, op, ranges,
                                       stack (root first, ';'-joined), weight
t:hotspots{by="function", order="bottom_up", range=nil, limit=nil}
                                       VTune's table: self (innermost) and total (anywhere on
                                       the stack) samples by "function", "module" or "range";
                                       order="top_down" sorts by total
t:flamegraph(path, {stacks="samples", under_ranges=false, range=nil})
avgs[i].self_cpu_samples, avgs[i].cpu_samples   samples inside key_averages' rows (the table
                                       gains "Self samples" and "Samples" columns)
  Not with schedule=, capture_range= or on-demand recording yet.]]

topics.memory_timeline = [[
p = profsh.profile{profile_memory=true}   |   profsh run --profile-memory -- CMD
  Allocations and frees are recorded in the collector (malloc, calloc, realloc, memalign,
  posix_memalign, aligned_alloc, valloc, large anonymous mmap/munmap) and attributed to the
  innermost open range of the thread: a PyTorch operator, an NVTX or an ITT range. The
  averages get CPU Mem and Self CPU Mem (cpu_memory_usage, self_cpu_memory_usage), with
  torch's meaning; allocations outside any range are "[memory]" events. In Python processes
  profiled with the torch activity (the default) only c10's tensor storage counts, as in
  torch.profiler; a script without torch gets every allocation with activities={"nvtx","itt"}.
  Recorded processes: the command, Python processes and programs linked with torch; the
  compilers and tools they run (torch.compile's cc1plus, a shell's sed) are left out, and
  p.summary.memory_processes_left_out and the summary line count them and name their programs.
  profile_memory="all" (--profile-memory=all) records every process.
trace:memory_timeline() -> {{ts=, pid=, tid=, bytes=, total=, device=}, ..., peak=, at_end=,
                   processes={[pid]={peak=, peak_ts=, at_end=, devices={["cuda:0"]={...}}}}}
  Every allocation (bytes > 0) and free (bytes < 0) in time order with the process's running
  total on its device ("cpu", or "cuda:N" in torch's GPU traces; also a "CPU Memory" counter
  track in the Chrome export), the peaks, and what was still allocated when each process's
  stream ended. peak and at_end are host memory; each GPU's are under devices. Reads torch's
  profile_memory traces too.]]

topics.gpu = [[
Where the device time goes (HTA's analyses; docs/ANALYSIS.md states each definition):
  t:temporal_breakdown{by_step=false}      kernel, idle, compute, non-compute, exposed comm/copy time
  t:kernel_breakdown{duration_ratio=0.8, num_kernels=10, include_memory_kernels=true}
                                           -> by type (overlaps included), by kernel
  t:idle_time_breakdown{consecutive_kernel_delay=30, streams=nil} -> breakdown, interval stats
  t:comm_comp_overlap(), t:queue_length_summary(), t:counters()
  t:annotation_breakdown{duration_ratio=0.8, num_kernels=1000, allowlist_patterns=nil,
                         use_gpu_annotation=true}      false: the CPU's user_annotation ranges
  t:kernel_launch_stats{runtime_cutoff=50, launch_delay_cutoff=100}
      .short_kernels, .long_launches, .long_delays, .aten_op_delays
  Every one takes include_last_profiler_step=false and exact_rounding=false. A trace without
  device work gives empty rows and a note (rows.notes).
  t:stats("cuda_gpu_kern_sum")             nsys' reports (also: profsh stats TRACE)
  t:kernel_table{tensor_core_patterns={}}  PyProf's kernel table (also: profsh kernels TRACE)
Results are lists of rows (plain tables): rows:table() prints them, rows:to_csv(path) writes
them (as the list is when called: sorted or edited), rows.columns names the columns.]]

topics.schedule = [[
s = profsh.schedule{skip_first=0, wait=0, warmup=0, active=1, ["repeat"]=0, skip_first_wait=0}
s(step) -> "NONE" | "WARMUP" | "RECORD" | "RECORD_AND_SAVE"      (torch.profiler.schedule)
p = profsh.profile{schedule=s, on_trace_ready=function(trace) ... end, step_marker="^ProfilerStep#%d+"}
  Steps of an attached workload start at ranges or marks (NVTX or ITT) whose names match
  step_marker (a Lua pattern; default PyTorch's ProfilerStep#N), or at profsh_step() from
  profsh.h. Between windows the collector records nothing and reads no clock; warmup
  steps are recorded and discarded; each window's trace (trace.steps = {first, last},
  trace.step_num) goes to on_trace_ready while the workload runs, then is released.
  capture_range="name" instead records only while a range of that name is open, one window
  per range. A handler may print, export, or call p:stop().
  Command line: profsh run --schedule wait=1,warmup=1,active=2 [--step-marker P] -- CMD
  Every step recorded, the steps around a trigger kept: :help flight_recorder.]]

topics.flight_recorder = [[
p = profsh.profile{flight_recorder={steps=20}, trigger=function(step, history) ... end,
                   on_trace_ready=function(dump) ... end}
  flight_recorder = {steps=N | seconds=S, mb=256, before=5, after=2, history=100}
  Every step of the workload is recorded (steps as for schedules: step_marker, profsh_step())
  and each process's last N steps (or those of the last S seconds; at least `before`) are kept
  decoded in memory, bounded by mb (also the collector's buffers per process, together).
  At each step boundary trigger(step, history) runs in profsh, not in the workload, and sees
  the step's summary, never its events: step.step, duration (ms), gpu_busy, gpu_idle,
  gpu_idle_fraction, ranges[name] (ms), top_ranges and top_operators ({name, time, count}),
  memory_at_start, memory_peak, memory_growth, memory_at_end (bytes), dropped, events,
  top_functions ({name, samples}); history.count, min, max, mean, median, p90, p95, p99 and
  the earlier summaries at history[1..count]. True or a reason string saves steps
  [step - before, step + after] as one trace for on_trace_ready, the reason in
  trace.metadata.profsh.reason. trigger may also be a string: "slow-step[:1.5]",
  "memory-growth[:10%]", "gpu-idle[:30%]", "range:NAME>MS" or a Lua expression over step and
  history. A trigger that raises an error is reported once and disabled; the run goes on.
  After the run, p.flight_recorder = {steps_seen, steps_kept, bytes_kept, peak_steps_kept,
  peak_bytes_kept, steps_dropped, triggers_fired, trigger_errors, dumps}.
  Command line: profsh run --flight-recorder 20 --trigger slow-step -- CMD saves each dump as
  BASE.PID.N.profsh beside -o (--flight-recorder-mb, --dump-before, --dump-after).]]

topics.record_function = [[
p:start() ... p:step() ... p:stop()            in-process profiling of Lua code
profsh.record_function(name, fn, ...) -> fn(...)'s results
  Records fn's run as a range named `name` while a started profile records; with a schedule,
  p:step() moves to the next step exactly as torch's prof.step() does, and on_trace_ready
  gets each window.]]

topics.on_demand = [[
profsh run --on-demand -- CMD      the workload runs with the collector idle
profsh trace --pid PID --steps N   records PID's next N steps, prints their table, saves them
profsh.trace{pid=PID, steps=N, output=nil, timeout=nil} -> Trace      the same from Lua
  Like Kineto's on-demand tracing. Requests go through a Unix socket in the session folder,
  which only the same user can use; steps come from the step marker (--step-marker).]]

topics.tensorboard_trace_handler = [[
profsh.tensorboard_trace_handler(dir, worker_name=HOST_PID, use_gzip=false) -> handler
  An on_trace_ready handler writing {worker_name}.{time_ns}.pt.trace.json(.gz) in dir, as
  torch's does: Kineto JSON that TensorBoard, HTA and profsh.load read.]]

topics.serve = [[
profsh.serve(logdir, {port=6006, host="127.0.0.1", threads=8})
  The web UI over a folder of traces (profsh serve LOGDIR on the command line): runs, workers
  and spans as tensorboard_trace_handler writes them, each trace's views, a timeline the
  server sends at the detail of the range in view, downloads. port=0 takes a free port; the
  URL is printed. Serves only files under logdir. Returns when SIGINT or SIGTERM arrives.]]

topics.run = [[
Command line:  profsh run [options] -- CMD [ARGS...]
  Like profsh.profile():run{CMD, ARGS...}: prints the operators table, saves the trace
  (-o PATH, default profsh-DATE-TIME.profsh; .json/.json.gz writes Chrome JSON) and exits
  with the workload's status. profsh run --help lists the options (--activities,
  --sort-by, --row-limit, --group-by-input-shape, --no-table, --keep-session, ...).
  profsh.load(folder) reads a kept session folder; profsh.load(file.pstream) one stream.
  Ctrl-C, SIGTERM and SIGHUP sent to profsh go on to the workload; profsh waits for it and
  saves the trace (a second signal: what was recorded so far, at once). If the trace cannot
  be saved, the session folder stays and profsh prints its path.
  Options take --opt value or --opt=value; usage errors exit with status 2.]]

topics.repl = [[
The REPL: expressions print their value (averages lists print as tables), statements run.
An incomplete chunk continues on the next line. Tab completes globals and the fields and
methods of profsh objects. Ctrl-C interrupts a running chunk, Ctrl-D exits.
History is kept in ~/.profsh_history (or $PROFSH_HISTORY).]]

function profsh.help(topic)
  topic = topic or ""
  local text = topics[topic]
  if not text then
    local names = {}
    for k in pairs(topics) do
      if k ~= "" then names[#names + 1] = k end
    end
    table.sort(names)
    return "no help on '" .. tostring(topic) .. "'; topics: " .. table.concat(names, ", ")
  end
  return text
end

-- A readable rendering of a value for the REPL: tables nested two levels deep, strings quoted,
-- profsh objects by their own __tostring.
local function repr(value, depth, seen)
  local kind = type(value)
  if kind == "string" then
    return string.format("%q", value)
  elseif kind ~= "table" then
    return tostring(value)
  end
  local meta = getmetatable(value)
  if depth == 0 and type(meta) == "table" and meta.__name == "profsh.Rows" then
    return (tostring(value):gsub("\n$", ""))  -- analysis rows print as their table
  end
  if seen[value] then return "<cycle>" end
  if depth > 2 then return "{...}" end
  seen[value] = true
  local parts = {}
  local n = #value
  for i = 1, math.min(n, 50) do
    parts[#parts + 1] = repr(value[i], depth + 1, seen)
  end
  if n > 50 then parts[#parts + 1] = "... (" .. n .. " items)" end
  local keys = {}
  for k in pairs(value) do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then keys[#keys + 1] = k end
  end
  table.sort(keys, function(a, b)
    if type(a) == type(b) and (type(a) == "string" or type(a) == "number") then return a < b end
    return type(a) < type(b)
  end)
  for i, k in ipairs(keys) do
    if i > 50 then
      parts[#parts + 1] = "..."
      break
    end
    local key = (type(k) == "string" and k:match("^[%a_][%w_]*$")) and k or ("[" .. repr(k, depth + 1, seen) .. "]")
    parts[#parts + 1] = key .. " = " .. repr(value[k], depth + 1, seen)
  end
  seen[value] = nil
  return "{" .. table.concat(parts, ", ") .. "}"
end

function profsh.repr(value)
  return repr(value, 0, {})
end

return profsh
