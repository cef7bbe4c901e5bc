# The command line as a user meets it: mistakes get one line naming the problem (with a "did
# you mean" when an option is mistyped) and a pointer to --help, never the whole usage, and
# exit with status 2 in every command.
$ profsh run --activities nvtx,cudaa -- true
profsh run: unknown activity 'cudaa' (activities: nvtx, itt, torch, cuda, cpu); did you mean 'cuda'?
(profsh run --help lists the options)
[2]
$ profsh run --activities nvtx,itts -- true
profsh run: unknown activity 'itts' (activities: nvtx, itt, torch, cuda, cpu); did you mean 'itt'?
(profsh run --help lists the options)
[2]
$ profsh run --row-limt 5 -- true
profsh run: unknown option '--row-limt'; did you mean '--row-limit'?
(profsh run --help lists the options)
[2]
$ profsh run --sort-by cpu_time_totl -- true
profsh run: unknown --sort-by key 'cpu_time_totl'; did you mean 'cpu_time_total'?
(profsh run --help lists the options)
[2]
$ profsh run --no-table=1 -- true
profsh run: --no-table takes no value (got '1')
(profsh run --help lists the options)
[2]
$ profsh run --with-stack=python -- true
profsh run: --with-stack=python: the stack forms are 'lines' and 'torch'
(profsh run --help lists the options)
[2]
$ profsh run --row-limit=-1 -- true
profsh run: --row-limit needs a non-negative whole number, got '-1'
(profsh run --help lists the options)
[2]
$ profsh run
profsh run: no command given (profsh run [options] -- CMD [ARGS...])
(profsh run --help lists the options)
[2]
# On demand, profsh trace saves what it records: -o belongs there.
$ profsh run --on-demand -o t.profsh -- true
profsh run: -o has no effect with --on-demand: give it to profsh trace --pid PID --steps N -o PATH
(profsh run --help lists the options)
[2]
$ profsh trace --pid 1
profsh trace: --pid and --steps are required
(profsh trace --help lists the options)
[2]
# The watchdog and dumps on demand belong to the flight recorder.
$ profsh run --watchdog 5 -- true
profsh run: --watchdog needs --flight-recorder N (the steps kept to dump on a hang)
(profsh run --help lists the options)
[2]
$ profsh run --flight-recorder 5 --watchdog-kill -- true
profsh run: --watchdog-kill needs --watchdog SECONDS
(profsh run --help lists the options)
[2]
$ profsh run --flight-recorder 5 --watchdog 0 -- true
profsh run: --watchdog 0: a number of seconds above 0, at most 86400
(profsh run --help lists the options)
[2]
$ profsh trace --pid 1 --dump --steps 3
profsh trace: --dump takes neither --steps nor -o: the run's flight recorder saves its dumps beside its own -o
(profsh trace --help lists the options)
[2]
$ profsh trace --dump
profsh trace: --dump needs --pid PID
(profsh trace --help lists the options)
[2]
$ profsh trace --stesp 3
profsh trace: unknown option '--stesp'; did you mean '--steps'?
(profsh trace --help lists the options)
[2]
$ profsh flamegraph --widht 3 x.folded
profsh flamegraph: unknown option '--widht'; did you mean '--width'?
(profsh flamegraph --help lists the options)
[2]
$ profsh flamegraph
profsh flamegraph: no input given (profsh flamegraph INPUT [-o OUT.svg])
(profsh flamegraph --help lists the options)
[2]
$ profsh --hepl
profsh: unknown option '--hepl'; did you mean '--help'?
(profsh --help lists the options)
[2]
$ profsh -x
profsh: unknown option '-x'
(profsh --help lists the options)
[2]
$ profsh -e
profsh: -e needs a Lua chunk
(profsh --help lists the options)
[2]
# Errors name a file in full, however deep its folder (Lua cuts chunk names to 60 characters):
# a recipe, a file a chunk loads with dofile, a template (tests/report/check_report.py).
$ d="$PWD/a_folder_deep_enough_that_lua_would_cut_the_name_of_a_file_in_it"; mkdir "$d"; printf 'local x\nprint(x.y)\n' > "$d/broken.lua"; profsh "$d/broken.lua" 2>&1 | head -1 | sed "s|$d|DIR|"; profsh -e "dofile('$d/broken.lua')" 2>&1 | head -1 | sed "s|$d|DIR|"; rm -r "$d"
DIR/broken.lua:2: attempt to index a nil value (local 'x')
DIR/broken.lua:2: attempt to index a nil value (local 'x')
# After -e, what follows -- is the chunk's arg.
$ profsh -e 'print(arg[1], arg[2], #arg)' -- one two
one	two	2
# A command that cannot start leaves no trace file behind.
$ profsh run -o t.profsh -- ./no-such-program; ls
profsh run: cannot run ./no-such-program: No such file or directory
# An output that cannot be written is refused before the workload starts (it would have made
# the file "ran"), with status 2; so is a folder, and a report path.
$ profsh run -o /nonexistent/dir/x.profsh -- touch ran; echo "status $?"; ls
profsh run: /nonexistent/dir/x.profsh: cannot create output file: No such file or directory (nothing was run)
status 2
$ profsh run -o . -- touch ran; echo "status $?"; ls
profsh run: .: is a folder, not a file name (nothing was run)
status 2
$ profsh run -o t.profsh --report /nonexistent/r.html -- touch ran; echo "status $?"; ls
profsh run: /nonexistent/r.html: cannot create output file: No such file or directory (nothing was run)
status 2
# A trace that cannot be saved at the end (the workload removed its folder) fails the run,
# though the workload succeeded; the recording is kept for a later save.
$ mkdir out; profsh run --no-table -o out/t.profsh -- rmdir out 2>err; echo "status $?"; grep -c 'the trace was not saved' err; rm -rf "$TMPDIR"/profsh-session-*
status 1
1
# --opt=value as well as --opt value; counts read as people write them.
$ profsh run --row-limit=2 --sort-by=count --output=t.profsh -- $BUILD/nvtx_pipeline 2>&1 | grep -v '^nvtx_pipeline:'
-+  -+  -+  -+  -+  -+  -+   (re)
 +Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls   (re)
-+  -+  -+  -+  -+  -+  -+   (re)
 +matmul_tile .* +2200   (re)
 +.* +\d+   (re)
-+  -+  -+  -+  -+  -+  -+   (re)
Self CPU time total: .* (re)
profsh: 1 process, 6 threads, 2520 ranges, 4 marks; \d+ bytes of streams; nothing dropped (re)
profsh: trace saved to t.profsh (profsh.load("t.profsh"))
# NVTX ranges are what the user put there to mark their code: their kind is annotation.
$ profsh -e 'local t = profsh.load(arg[1]); print(t:key_averages()[1].kind, #t:events{kind = "annotation"})' -- t.profsh
annotation	2520
# A schedule whose step marker never matched says so, and names the ranges the workload has
# (their counts are hints: threads counting one name at once may lose a few, by design).
$ profsh run --schedule wait=1,active=1 --step-marker '^nomatch' -o w.profsh -- $BUILD/nvtx_pipeline
nvtx_pipeline: 20 iterations, checksum 55740555.800
profsh: 0 windows: no range or mark matched '\^nomatch' \(see --step-marker\); the range names seen most often: 'matmul_tile' \(\d+\)(, 'layer\d\.\w+' \(\d+\)){4}; 1 process, 6 threads, 0 ranges, 0 marks; \d+ bytes of streams; nothing dropped (re)
$ profsh run --schedule wait=18,active=1 --step-marker '^iteration' --no-table -o w.profsh -- $BUILD/nvtx_pipeline 2>&1 | grep -v '^nvtx_pipeline:'
== window 0 of pid \d+ \(steps 18-18\) (re)
saved w.\d+.0.profsh (re)
profsh: 1 window; 1 process, 6 threads, \d+ ranges, 0 marks; \d+ bytes of streams; nothing dropped (re)
# A window whose trace cannot be saved (the workload removed the folder) fails the run too.
$ mkdir out; profsh run --schedule wait=18,active=1 --step-marker '^iteration' --no-table -o out/w.profsh -- sh -c 'rmdir out && exec "$0"' $BUILD/nvtx_pipeline >run.out 2>err; echo "status $?"; grep -c '^not saved: out/w\.[0-9]*\.0\.profsh' run.out; grep -c '^profsh run: 1 window was not saved$' err
status 1
1
1
# The on-demand message names the workload's own pid, ready to paste. (It was missing twice in
# CI's sanitizer pass, cause unknown: a failure shows profsh's stderr and the pid file.)
$ profsh run --on-demand -- sh -c 'echo $$ > pid' 2> err; grep -c -- "profsh trace --pid $(cat pid) --steps N" err || { echo "stderr:"; cat err; echo "pid: $(cat pid)"; }
1
# Numbers printed for people: 0.1 + 0.2 is 0.3 here, not 0.30000000000000004.
$ printf 'a;b 0.1\na;c 0.2\n' > s.folded; profsh flamegraph s.folded -o s.svg
wrote s.svg: 2 stacks, 4 frames drawn, total 0.3 samples
# A run that sampled and caught nothing (1 Hz: the first sample comes after a second of CPU)
# gives empty sample lists; a trace never sampled is told how to record samples.
$ profsh run --activities nvtx,cpu --sample-rate 1 --no-table -o quiet.profsh -- true 2>/dev/null; profsh -e 'local t = profsh.load("quiet.profsh") print(#t:samples{}, #t:hotspots{})'
0	0
$ printf '[{"name":"a","ph":"X","ts":1,"dur":2,"pid":1,"tid":1}]' > one.json; profsh -e 'print(select(2, pcall(function() return profsh.load("one.json"):samples{} end)))'
(command line):1: one.json: the trace has no CPU samples (record with the cpu activity: --activities ...,cpu or activities={..., "cpu"})
# profsh summarize: each rank's summary file.
$ profsh summarize --top-kernel 5 x.json -o y
profsh summarize: unknown option '--top-kernel'; did you mean '--top-kernels'?
(profsh summarize --help lists the options)
[2]
$ profsh summarize x.json
profsh summarize: no output given (-o OUT.sqlite, or -o FOLDER for several traces)
(profsh summarize --help lists the options)
[2]
$ profsh summarize a.json b.json --rank 2 -o y
profsh summarize: --rank names the rank of one trace: give one trace with it
(profsh summarize --help lists the options)
[2]
$ profsh summarize --top-operators 0 x.json -o y
profsh summarize: --top-operators needs a positive whole number, got '0'
(profsh summarize --help lists the options)
[2]
$ profsh summarize x.json -o x.sqlite.gz
profsh summarize: -o x.sqlite.gz: a summary is a plain SQLite file (no .gz)
(profsh summarize --help lists the options)
[2]
