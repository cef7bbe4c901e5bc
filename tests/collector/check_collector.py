#!/usr/bin/env python3
"""The collector end to end: workloads built in tests/ run under `profsh run` (or
profsh.profile():run()) and what profsh recorded is compared with what they did, exactly.

Usage: check_collector.py PROFSH NVTX_WORKLOAD ITT_WORKLOAD COLLECTOR_TESTS_DIR [CHECK...]
"""
import collections
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


# Lua that prints one line per event of interest: pid, tid, name, ph, flags and args, tab-separated.
DUMP = r"""
local t = profsh.load(arg[1])
for _, w in ipairs(t.warnings) do print("W", w) end
for _, p in ipairs(t:processes()) do
  print("P", p.pid, p.name or "", p.labels or "")
  for _, th in ipairs(p.threads) do print("T", p.pid, th.tid, th.name or "", th.events) end
end
for _, e in ipairs(t:events{limit = 200000}) do
  if e.ph ~= "M" then
    local args = {}
    for k, v in pairs(e.args) do args[#args + 1] = k .. "=" .. tostring(v) end
    table.sort(args)
    print("E", e.pid, e.tid, e.name, e.ph, e.cat, e.unterminated and "open" or "closed", e.dur, table.concat(args, ";"))
  end
end
local m = t.metadata.profsh
for _, p in ipairs(m.processes) do print("M", p.pid, p.ppid, p.exec_index, p.command, p.ended) end
for _, k in ipairs({"dropped_ranges", "dropped_events", "pops_without_push", "ends_of_unknown_ranges",
                    "ranges_open_at_thread_exit", "ranges_open_at_end", "streams_cut_short"}) do
  print("D", k, m[k])
end
"""


class Dump:
    def __init__(self, text):
        self.warnings, self.processes, self.threads, self.events, self.meta, self.drops = [], {}, [], [], [], {}
        for line in text.splitlines():
            f = line.split("\t")
            if f[0] == "W":
                self.warnings.append(f[1])
            elif f[0] == "P":
                self.processes[f[1]] = (f[2], f[3])
            elif f[0] == "T":
                self.threads.append((f[1], f[2], f[3], int(f[4])))
            elif f[0] == "E":
                self.events.append({"pid": f[1], "tid": f[2], "name": f[3], "ph": f[4], "cat": f[5], "open": f[6] == "open",
                                    "dur": float(f[7]), "args": dict(a.split("=", 1) for a in f[8].split(";") if a)})
            elif f[0] == "M":
                self.meta.append({"pid": f[1], "ppid": f[2], "exec_index": int(f[3]), "command": f[4], "ended": f[5]})
            elif f[0] == "D":
                self.drops[f[1]] = int(f[2])

    def count(self, name, pid=None, ph="X"):
        return sum(1 for e in self.events if e["name"] == name and e["ph"] == ph and (pid is None or e["pid"] == pid))

    def named(self, name):
        return [e for e in self.events if e["name"] == name]


class Env:
    def __init__(self, profsh, nvtx, itt, tests_dir, work):
        self.profsh, self.nvtx, self.itt, self.tests_dir, self.work = profsh, nvtx, itt, tests_dir, work

    def run(self, args, output, env=None, timeout=300):
        return subprocess.run([self.profsh, "run", "-o", output, *args], capture_output=True, text=True,
                              cwd=self.work, env=env, timeout=timeout)

    def dump(self, trace):
        script = os.path.join(self.work, "dump.lua")
        with open(script, "w") as f:
            f.write(DUMP)
        r = subprocess.run([self.profsh, script, trace], capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            check(False, "the trace %s loads (%s)" % (trace, r.stderr.strip()))
            return Dump("")
        return Dump(r.stdout)


def check_nested(env):
    out = os.path.join(env.work, "nested.profsh")
    r = env.run(["--", env.nvtx, "nested", "4", "100"], out)
    check(r.returncode == 0 and "outer" in r.stdout and "inner" in r.stdout,
          "profsh run prints the table and exits with the workload's status (%d)" % r.returncode)
    check("trace saved to " + out in r.stderr, "profsh run says where the trace is")
    d = env.dump(out)
    check(d.count("outer") == 400 and d.count("inner") == 1200,
          "nested ranges on 4 threads: exact counts (outer %d/400, inner %d/1200)" % (d.count("outer"), d.count("inner")))
    per_thread = {}
    for e in d.named("outer"):
        per_thread[e["tid"]] = per_thread.get(e["tid"], 0) + 1
    check(sorted(per_thread.values()) == [100] * 4, "each worker thread has its 100 outer ranges: %s" % sorted(per_thread.values()))
    # Every inner range lies inside an outer range of its own thread.
    inside = True
    outers = {}
    for e in d.named("outer"):
        outers.setdefault(e["tid"], []).append(e)
    check(all(not e["open"] for e in d.events) and not d.warnings, "nothing unbalanced, no warnings: %s" % d.warnings[:3])
    check(d.drops.get("dropped_ranges") == 0, "nothing dropped")


def check_messages(env):
    # Texts of 1 to 40 bytes pushed from one reused buffer, at a page's end (the next page is
    # not readable) and mid-page, changed one byte at a time and shortened: every push is
    # recorded under the text it had.
    out = os.path.join(env.work, "messages.profsh")
    r = env.run(["--no-table", "--", env.nvtx, "messages"], out)
    check(r.returncode == 0, "the messages workload runs (%d: %s)" % (r.returncode, r.stderr[-300:]))
    pushed = collections.Counter(r.stdout.split())
    d = env.dump(out)
    recorded = collections.Counter(e["name"] for e in d.events if e["ph"] == "X")
    check(sum(pushed.values()) == 1878 and recorded == pushed,
          "every message recorded under its text (%d pushed, %d recorded, %d names differ)" %
          (sum(pushed.values()), sum(recorded.values()), len(set(pushed.items()) ^ set(recorded.items()))))


def check_processes(env):
    out = os.path.join(env.work, "processes.profsh")
    script = os.path.join(env.tests_dir, "exec_nested.sh")
    r = env.run(["--", env.nvtx, "processes", script], out)
    check(r.returncode == 0, "fork + exec workload exits 0 (%d: %s)" % (r.returncode, r.stderr[-300:]))
    d = env.dump(out)
    by_name = {}
    for m in d.meta:
        by_name.setdefault(m["command"].split(" ")[-1] if "processes" in m["command"] else m["command"], []).append(m)
    parent = [m for m in d.meta if m["command"].endswith("processes " + script)]
    check(len(parent) >= 1, "the parent process is in the trace")
    if not parent:
        return
    ppid = parent[0]["pid"]
    children = [m for m in d.meta if m["ppid"] == ppid]
    check(d.count("parent", ppid) == 20, "parent: 20 ranges in its own process (%d)" % d.count("parent", ppid))
    child_pids = {m["pid"] for m in children}
    child = [p for p in child_pids if d.count("child", p) > 0]
    quick = [p for p in child_pids if d.count("quick child", p) > 0]
    check(len(child) == 1 and d.count("child", child[0]) == 20 and d.count("child") == 20,
          "forked child (exit): 20 ranges, as its own process with the parent as ppid")
    check(len(quick) == 1 and d.count("quick child", quick[0]) == 5 and d.count("quick child") == 5,
          "forked child ending with _exit: its 5 ranges are flushed")
    execd = [m for m in d.meta if m["command"].endswith("nested 2 50")]
    # fork -> exec sh -> exec workload: three images of one pid, each earlier stream ending with its exec.
    images = sorted((m for m in d.meta if execd and m["pid"] == execd[0]["pid"]), key=lambda m: m["exec_index"])
    check(len(execd) == 1 and [m["exec_index"] for m in images] == [0, 1, 2] and
          all(m["ended"].startswith("exec ") for m in images[:-1]) and images[1]["command"].startswith("sh "),
          "fork, exec of a shell script, exec of the workload: one pid, three images, each stream ending with its exec")
    if execd:
        p = execd[0]["pid"]
        check(d.count("outer", p) == 100 and d.count("inner", p) == 300,
              "the exec'd image's ranges are under the shell's pid (outer %d/100, inner %d/300)" % (d.count("outer", p), d.count("inner", p)))
        check(d.processes.get(p, ("",))[0].endswith("nested 2 50"), "its process is named after the last image: %s" % (d.processes.get(p),))
    check(all(m["ended"] != "cut short (killed, or still running)" for m in d.meta), "every stream ended cleanly")


def check_two_objects(env):
    out = os.path.join(env.work, "two.profsh")
    env.run(["--", env.nvtx, "two_objects"], out)
    d = env.dump(out)
    check(d.count("from the program") == 7 and d.count("from the library") == 9,
          "NVTX in a program and in a shared library with its own NVTX: both initialisations served (%d/7, %d/9)"
          % (d.count("from the program"), d.count("from the library")))


def check_ranks(env):
    out = os.path.join(env.work, "rank.profsh")
    e = dict(os.environ, RANK="3", LOCAL_RANK="1", WORLD_SIZE="8")
    env.run(["--", env.nvtx, "nested", "1", "2"], out, env=e)
    d = env.dump(out)
    labels = [v[1] for v in d.processes.values()]
    check(labels == ["rank 3"], "a distributed launcher's RANK labels the process: %s" % labels)
    script = os.path.join(env.work, "env.lua")
    with open(script, "w") as f:
        f.write("local p = profsh.load(arg[1]).metadata.profsh.processes[1]\n"
                "print(p.environment.RANK, p.environment.LOCAL_RANK, p.environment.WORLD_SIZE, p.ppid > 0)\n")
    r = subprocess.run([env.profsh, script, out], capture_output=True, text=True)
    check(r.stdout.split() == ["3", "1", "8", "true"], "rank variables and the parent pid are kept: %s" % r.stdout.strip())


def check_start_end(env):
    out = os.path.join(env.work, "startend.profsh")
    env.run(["--", env.nvtx, "startend"], out)
    d = env.dump(out)
    h = d.named("handoff")
    check(len(h) == 8 and all(not e["open"] for e in h) and all(e["dur"] > 0 for e in h),
          "start/end across threads: 8 closed ranges (%d)" % len(h))
    check(all(e["tid"].startswith("NVTX start/end ranges") for e in h), "they lie on start/end lanes, not on a thread")
    check(not d.warnings, "no warnings: %s" % d.warnings[:3])


def check_attributes(env):
    out = os.path.join(env.work, "attributes.profsh")
    env.run(["--", env.nvtx, "attributes"], out)
    d = env.dump(out)
    check(d.count("données χρόνος 学习 🚀") == 1, "UTF-8 messages keep their text")
    check(d.count("wide ñ 走") == 1 and d.count("wide mark ✓", ph="i") == 1, "wide (W) messages become UTF-8")
    reg = d.named("registered step")
    check(len(reg) == 4 and all(e["args"].get("domain") == "my domain" and e["args"].get("category") == "compute" and
                                e["args"].get("color") == "#00ff00" for e in reg),
          "registered strings, domains, named categories and colors: %s" % (reg[:1],))
    want = {"u64": "18446744073709551615", "i64": "-9000000000", "double": "2.5", "u32": "4000000000", "i32": "-42",
            "float": "0.25"}
    got = {k: (d.named(k)[0]["args"].get("payload") if d.named(k) else None) for k in want}
    # Lua prints integers above 2^63 as floats (14 digits): compare those relatively.
    ok = all(got[k] is not None and abs(float(got[k]) - float(want[k])) <= 1e-12 * abs(float(want[k])) for k in want)
    check(ok, "every payload type keeps its value: %s" % got)
    io = d.named("default-domain io")
    check(len(io) == 1 and io[0]["args"].get("category") == "io", "categories named in the default domain")
    marks = d.named("domain mark")
    check(len(marks) == 1 and marks[0]["ph"] == "i" and marks[0]["args"].get("domain") == "my domain", "domain marks")
    unnamed = [e for e in d.named("") if e["args"].get("domain") == "my domain"]
    check(len(unnamed) == 1 and not d.named("<profsh: string table full>"),
          "a push without attributes is recorded unnamed: %s" % unnamed)


def check_unbalanced(env):
    out = os.path.join(env.work, "unbalanced.profsh")
    r = env.run(["--", env.nvtx, "unbalanced"], out)
    check(r.returncode == 0 and "pop without push returned -1" in r.stdout, "a pop without a push is refused (-1), not a crash")
    d = env.dump(out)
    left = d.named("left open by a thread")
    check(len(left) == 2 and all(e["open"] for e in left), "ranges open when their thread exits end there, marked open")
    exit_open = d.named("left open at exit")
    check(len(exit_open) == 1 and exit_open[0]["open"], "a range open at exit is kept, marked open")
    check(d.drops.get("pops_without_push") == 1 and d.drops.get("ends_of_unknown_ranges") == 1 and
          d.drops.get("ranges_open_at_thread_exit") == 2 and d.drops.get("ranges_open_at_end") == 1,
          "each kind of imbalance is counted: %s" % d.drops)
    check(any("without a matching push" in w for w in d.warnings) and any("thread exited" in w for w in d.warnings),
          "and reported as warnings")
    check("warning:" in r.stderr, "profsh run prints the warnings")


def check_itt(env):
    out = os.path.join(env.work, "itt.profsh")
    r = env.run(["--", env.itt], out)
    check(r.returncode == 0, "the ITT client runs (%d %s)" % (r.returncode, r.stderr[-200:]))
    d = env.dump(out)
    counts = {n: d.count(n) for n in ["aten::conv2d", "aten::relu", "task with ids", "itt_task_function", "inside frame",
                                      "open across pause", "hidden while paused", "after resume", "dnnl_primitive",
                                      "worker task"]}
    want = {"aten::conv2d": 10, "aten::relu": 10, "task with ids": 1, "itt_task_function": 1, "inside frame": 3,
            "open across pause": 1, "hidden while paused": 0, "after resume": 3, "dnnl_primitive": 4, "worker task": 200}
    check(counts == want, "ITT tasks: objects made before loading, per-call string handles, _fn, a second static part, "
          "threads, pause: %s" % counts)
    check(d.count("PyTorch frame") == 3, "ITT frames (%d)" % d.count("PyTorch frame"))
    check(d.count("checkpoint", ph="i") == 2, "ITT markers")
    depth = [e["args"].get("value") for e in d.events if e["ph"] == "C" and e["name"] == "PyTorch/queue depth"]
    loss = [e["args"].get("value") for e in d.events if e["ph"] == "C" and e["name"] == "PyTorch/loss"]
    check(depth == ["5", "6", "5"] and [float(x) for x in loss] == [0.5, 0.25],
          "ITT counters as counter events (set, inc, dec; double): %s %s" % (depth, loss))
    check(any(t[2] == "itt main" for t in d.threads), "ITT thread names")
    check(any(e["name"] == "collection paused" for e in d.events), "the paused interval is shown")
    torch = [e for e in d.named("aten::conv2d")]
    check(torch and torch[0]["args"].get("domain") == "PyTorch", "tasks carry their domain")


def check_exit_codes(env):
    out = os.path.join(env.work, "exit.profsh")
    r = env.run(["--", "sh", "-c", "exit 7"], out)
    check(r.returncode == 7, "profsh run exits with the workload's status (7: %d)" % r.returncode)
    r = env.run(["--", "/nonexistent/program"], out)
    check(r.returncode == 127 and "/nonexistent/program" in r.stderr, "a command that cannot run: 127 and its name")
    r = subprocess.run([env.profsh, "run"], capture_output=True, text=True)
    check(r.returncode == 2 and "no command" in r.stderr, "no command: usage, status 2")
    r = subprocess.run([env.profsh, "run", "--activities", "cupti", "--", "true"], capture_output=True, text=True)
    check(r.returncode == 2 and "unknown activity 'cupti'" in r.stderr, "an unknown activity is named: a usage error, status 2")


def check_injection_owned(env):
    out = os.path.join(env.work, "owned.profsh")
    e = dict(os.environ, NVTX_INJECTION64_PATH="/opt/other-tool/libinjection.so")
    r = env.run(["--", env.nvtx, "nested", "1", "5"], out, env=e)
    check(r.returncode == 0 and "NVTX_INJECTION64_PATH is already set to /opt/other-tool/libinjection.so" in r.stderr,
          "an injection variable owned by another tool is left alone, and profsh says so")
    d = env.dump(out)
    check(d.count("outer") == 0, "then no NVTX ranges are collected (the other tool's variable stays)")


def check_session_privacy(env):
    out = os.path.join(env.work, "keep.profsh")
    r = env.run(["--keep-session", "--", env.nvtx, "nested", "1", "5"], out)
    folder = [l.split("streams kept in ", 1)[1] for l in r.stderr.splitlines() if "streams kept in " in l]
    check(len(folder) == 1, "--keep-session prints the session folder")
    if not folder:
        return
    folder = folder[0].strip()
    mode = stat.S_IMODE(os.stat(folder).st_mode)
    files = [os.path.join(folder, f) for f in os.listdir(folder)]
    check(mode == 0o700 and files and all(stat.S_IMODE(os.stat(f).st_mode) == 0o600 for f in files),
          "the session folder is the user's alone (0700, streams 0600)")
    d = env.dump(folder)
    check(d.count("outer") == 5, "profsh.load reads a session folder")
    single = env.dump(files[0])
    check(single.count("outer") == 5, "and a single stream file")
    shutil.rmtree(folder)  # kept on request: the test that asked removes it


def check_without_session(env):
    lib = os.path.join(os.path.dirname(env.profsh), "libprofsh_collector.so")
    e = dict(os.environ, LD_PRELOAD=lib, NVTX_INJECTION64_PATH=lib)
    e.pop("PROFSH_SESSION", None)
    r = subprocess.run([env.nvtx, "unbalanced"], capture_output=True, text=True, env=e)
    check(r.returncode == 0 and r.stderr == "", "without a session the collector stays out of the way (no output, status 0)")


def check_sigkill(env):
    out = os.path.join(env.work, "killed.profsh")
    proc = subprocess.Popen([env.profsh, "run", "-o", out, "--", env.nvtx, "until_killed"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=env.work)
    reports = []
    start = time.time()
    workload = None
    while time.time() - start < 1.0:
        line = proc.stdout.readline()
        if not line:
            break
        if line[0].isdigit():
            done, ns = line.split()
            reports.append((int(done), int(ns)))
        if workload is None:
            try:
                with open("/proc/%d/task/%d/children" % (proc.pid, proc.pid)) as f:
                    kids = f.read().split()
                workload = int(kids[0]) if kids else None
            except OSError:
                pass
    check(workload is not None, "found the workload's pid")
    if workload is None:
        proc.kill()
        return
    kill_ns = time.time_ns()
    os.kill(workload, signal.SIGKILL)
    rest, err = proc.communicate(timeout=120)
    for line in rest.splitlines():
        if line[:1].isdigit():
            done, ns = line.split()
            reports.append((int(done), int(ns)))
    check(proc.returncode == 128 + signal.SIGKILL, "profsh run reports the kill (137: %d)" % proc.returncode)
    d = env.dump(out)
    recorded = d.count("tick")
    before = max([n for n, ns in reports if ns <= kill_ns - 100_000_000] or [0])
    check(before > 0 and recorded >= before,
          "after SIGKILL the trace holds every range ended 100 ms before the kill (%d recorded, %d ended by then)" % (recorded, before))
    check(d.drops.get("streams_cut_short") == 1 and any("did not finish" in w for w in d.warnings),
          "the cut stream is reported")


def workload_of(proc):
    """The pid of profsh's child, once it has one (None after 5 s)."""
    deadline = time.time() + 5
    while time.time() < deadline:
        try:
            with open("/proc/%d/task/%d/children" % (proc.pid, proc.pid)) as f:
                kids = f.read().split()
            if kids:
                return int(kids[0])
        except OSError:
            return None
        time.sleep(0.01)
    return None


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is not alive: its parent (init, once profsh is gone) has yet to reap it.
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def check_signals(env):
    # timeout(1), kill, a batch scheduler or a closed terminal signal profsh, not the workload:
    # profsh passes the signal on, waits for the workload and saves the trace.
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        name = signal.Signals(sig).name
        out = os.path.join(env.work, "signal-%s.profsh" % name)
        proc = subprocess.Popen([env.profsh, "run", "--no-table", "-o", out, "--", env.nvtx, "until_killed"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=env.work)
        workload = workload_of(proc)
        time.sleep(0.5)
        proc.send_signal(sig)
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            if workload:
                os.kill(workload, signal.SIGKILL)
            check(False, "%s: profsh ends after passing the signal on" % name)
            continue
        check(proc.returncode == 128 + sig, "%s: profsh exits as the workload did (%d: %d)" % (name, 128 + sig, proc.returncode))
        check(workload is not None and not alive(workload), "%s: the workload got the signal and is gone, not orphaned" % name)
        check("%s passed on to %s (pid %d)" % (name, env.nvtx, workload or 0) in err and "trace saved to " + out in err,
              "%s: profsh says it passed the signal on and saved the trace" % name)
        ticks = env.dump(out).count("tick")
        check(ticks > 0, "%s: the trace holds what ran before the signal (%d ticks)" % (name, ticks))

    # A second signal: the workload ignores SIGTERM; profsh saves what there is and goes.
    # (Its output goes to a file: the workload, still running, would hold a pipe open.)
    out = os.path.join(env.work, "twice.profsh")
    with open(os.path.join(env.work, "twice.err"), "w+") as err_file:
        proc = subprocess.Popen([env.profsh, "run", "--no-table", "-o", out, "--", "sh", "-c",
                                 "trap '' TERM; exec %s until_killed" % env.nvtx],
                                stdout=subprocess.DEVNULL, stderr=err_file, cwd=env.work)
        workload = workload_of(proc)
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        check(proc.poll() is None, "after one SIGTERM that the workload ignores, profsh still waits")
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        err_file.seek(0)
        err = err_file.read()
    check(proc.returncode == 128 + signal.SIGTERM, "a second SIGTERM: profsh exits (143: %s)" % proc.returncode)
    check("SIGTERM again: saving what was recorded so far" in err and "trace saved to " + out in err,
          "a second SIGTERM: profsh says so and saves the trace")
    check(env.dump(out).count("tick") > 0, "the trace saved after a second signal holds the ranges so far")
    if workload:
        os.kill(workload, signal.SIGKILL)

    # When the trace cannot be saved (its folder, writable when profsh checked it before the
    # start, is gone by the end), the run fails and the recording stays where profsh says, and
    # loads.
    gone = os.path.join(env.work, "gone")
    os.mkdir(gone)
    r = env.run(["--no-table", "--", "sh", "-c", 'rmdir "$0" && exec "$@"', gone, env.nvtx, "nested", "1", "5"],
                os.path.join(gone, "t.profsh"))
    folder = [l.split("the recording stays in ", 1)[1].split(":", 1)[0] for l in r.stderr.splitlines()
              if "the recording stays in " in l]
    check(r.returncode == 1 and len(folder) == 1 and os.path.isdir(folder[0]),
          "an unsaved trace: profsh fails (1: %d) and names the session folder that holds it" % r.returncode)
    if folder and os.path.isdir(folder[0]):
        hint = [l for l in r.stderr.splitlines() if "profsh -e" in l]
        check(hint and "-- " + folder[0] + " OUT.profsh" in hint[0], "and says how to save it: %s" % (hint[0].strip() if hint else r.stderr))
        check(env.dump(folder[0]).count("outer") == 5, "and profsh.load reads it")
        shutil.rmtree(folder[0])


def check_stress(env):
    # 16 threads × 1 million push/pop pairs as fast as they go: every range is either recorded
    # or counted as dropped.
    lua = os.path.join(env.work, "stress.lua")
    with open(lua, "w") as f:
        f.write("""
local p = profsh.profile{activities = {"nvtx"}}
local status = p:run{arg[1], "stress", "16", "1000000"}
local n = 0
for _, a in ipairs(p:key_averages()) do if a.key == "stress" then n = a.count end end
print(status, n, p.summary.dropped_ranges, p.summary.ranges_open_at_end, p.summary.pops_without_push)
""")
    r = subprocess.run([env.profsh, lua, env.nvtx], capture_output=True, text=True, timeout=600)
    fields = r.stdout.split()
    check(r.returncode == 0 and len(fields) == 5, "the stress run completes (%s)" % (r.stderr[-300:] or r.stdout))
    if len(fields) != 5:
        return
    status, recorded, dropped, open_end, pops = (int(x) for x in fields)
    check(status == 0 and recorded + dropped == 16_000_000 and open_end == 0 and pops == 0,
          "16 threads x 1M ranges: recorded %d + dropped %d = %d (exactly 16000000)" % (recorded, dropped, recorded + dropped))


MEMORY = r"""
local p = profsh.profile{activities = {"nvtx", "itt"}, profile_memory = true}
assert(p:run{arg[1], arg[2]} == 0)
for _, a in ipairs(p:key_averages()) do print("A", a.key, a.count, a.cpu_memory_usage, a.self_cpu_memory_usage) end
local m = p:memory_timeline()
local big = 0
for _, point in ipairs(m) do if math.abs(point.bytes) == 4 * 1024 * 1024 then big = big + 1 end end
print("T", #m, m.peak, m.at_end, big)
print("S", p.summary.memory_events, p.summary.memory_peak, p.summary.memory_at_end)
local exported = p:export_chrome_trace("memory.json")
local f = assert(io.open("memory.json"))
local text = f:read("a")
f:close()
local _, counters = text:gsub('"name": ?"CPU Memory"', "")
-- The counter's values are the running total in time order: its highest is the peak, its last
-- the bytes at exit.
local highest, last, last_ts = 0, nil, -1
for _, e in ipairs(profsh.load("memory.json"):events{name = "CPU Memory"}) do
  local v = e.args["Total Allocated"]
  highest = math.max(highest, v)
  if e.ts >= last_ts then last, last_ts = v, e.ts end
end
print("C", counters, highest, last)
"""


def check_memory(env):
    script = os.path.join(env.work, "memory.lua")
    with open(script, "w") as f:
        f.write(MEMORY)
    r = subprocess.run([env.profsh, script, env.nvtx, "memory"], capture_output=True, text=True, cwd=env.work,
                       timeout=300)
    check(r.returncode == 0, "a native NVTX workload runs with profile_memory (%d %s)" % (r.returncode, r.stderr[-300:]))
    rows, timeline, summary, counters, counter_peak, counter_last = {}, None, None, 0, None, None
    for line in r.stdout.splitlines():
        f = line.split("\t")
        if f[0] == "A":
            rows[f[1]] = (int(f[3]), int(f[4]))
        elif f[0] == "T":
            timeline = [int(x) for x in f[1:]]
        elif f[0] == "S":
            summary = [int(x) for x in f[1:]]
        elif f[0] == "C":
            counters, counter_peak, counter_last = int(f[1]), int(f[2]), int(f[3])
    kib = 1024
    # glibc reports usable sizes: a little above what was asked for.
    near = lambda v, want: want <= v <= want + 8 * kib
    check(near(rows.get("keep", (0, 0))[0], 1024 * kib) and rows["keep"][0] == rows["keep"][1],
          "malloc in a range: its CPU Mem and Self CPU Mem (%s)" % (rows.get("keep"),))
    check(rows.get("temporary") == (0, 0), "calloc and free in one range: net 0 (%s)" % (rows.get("temporary"),))
    inner, outer = rows.get("inner", (0, 0)), rows.get("outer", (0, 0))
    check(near(inner[1], 512 * kib) and near(outer[1], 128 * kib) and outer[0] == outer[1] + inner[0],
          "posix_memalign in a nested range, aligned_alloc in its parent: self and total (%s %s)" % (outer, inner))
    check(near(rows.get("grow", (0, 0))[0], 2048 * kib), "realloc: the old block freed, the new one allocated (%s)" % (rows.get("grow"),))
    check(rows.get("realloc to zero") == (0, 0), "realloc(p, 0) frees p: net 0 (%s)" % (rows.get("realloc to zero"),))
    check(rows.get("mapping") == (0, 0) and timeline and timeline[3] == 2,
          "a large anonymous mmap and its munmap (%s, %s points of 4 MiB)" % (rows.get("mapping"), timeline and timeline[3]))
    check(near(rows.get("on another thread", (0, 0))[1], 300 * kib),
          "memory counts for the innermost range of the allocating thread (%s)" % (rows.get("on another thread"),))
    kept = (1024 + 128 + 512 + 2048) * kib
    # Bytes at exit: the kept blocks and the C++ runtime's own few; not the collector's 2 MiB
    # rings, which it maps for each thread while the workload runs.
    check(timeline is not None and timeline[1] >= kept + 4096 * kib and kept <= timeline[2] <= kept + 256 * kib,
          "memory timeline: peak %s and still allocated at exit %s (the kept blocks: %d)"
          % (timeline and timeline[1], timeline and timeline[2], kept))
    check(summary is not None and timeline is not None and summary[0] == timeline[0] and summary[1:] == timeline[1:3],
          "the summary's memory events, peak and bytes at exit agree with the timeline (%s %s)" % (summary, timeline))
    check(counters == timeline[0] if timeline else False, "a CPU Memory counter track in the Chrome export (%d)" % counters)
    check(timeline is not None and counter_peak == timeline[1] and counter_last == timeline[2],
          "the counter track's highest and last values are the peak and the bytes at exit (%s %s)"
          % (counter_peak, counter_last))
    r = subprocess.run([env.profsh, "run", "--profile-memory", "--no-table", "-o", os.path.join(env.work, "m.profsh"), "--",
                        env.itt], capture_output=True, text=True, cwd=env.work, timeout=300)
    check(r.returncode == 0 and "memory" not in r.stderr.lower().replace("memory events", ""),
          "an ITT workload runs with --profile-memory (%d %s)" % (r.returncode, r.stderr[-300:]))


MEMORY_SCOPE = r"""
local p = profsh.profile{activities = {"nvtx", "itt"}, profile_memory = load("return " .. arg[1])()}
assert(p:run{"/bin/sh", "-c", arg[2]} == 0)
local keep = 0
for _, a in ipairs(p:key_averages()) do if a.key == "keep" then keep = a.cpu_memory_usage end end
local by_pid = {}
for _, point in ipairs(p:memory_timeline()) do by_pid[point.pid] = true end
local recorded = 0
for _ in pairs(by_pid) do recorded = recorded + 1 end
print("M", keep, p.summary.memory_processes_left_out, p.summary.processes, recorded)
"""


def check_memory_scope(env):
    """--profile-memory records the command and its Python and torch processes, not the programs
    they run (a compiler under torch.compile made 12 times Python's allocations); =all does."""
    script = os.path.join(env.work, "memory_scope.lua")
    with open(script, "w") as f:
        f.write(MEMORY_SCOPE)
    # The command is a shell; it runs the NVTX workload (1 MiB kept in range "keep") and, where
    # there is one, the C compiler (gcc's cc1 and as are more processes).
    source = os.path.join(env.work, "scope.c")
    with open(source, "w") as f:
        f.write("int main(void) { return 0; }\n")
    compiler = shutil.which("cc")
    command = "%s memory" % env.nvtx
    if compiler:
        command += " && %s -c %s -o %s" % (compiler, source, os.path.join(env.work, "scope.o"))
    command += " && :"  # a builtin last: the shell execs no program in its own process
    results = {}
    for scope in ("true", '"all"'):
        r = subprocess.run([env.profsh, script, scope, command], capture_output=True, text=True,
                           cwd=env.work, timeout=300)
        line = [l for l in r.stdout.splitlines() if l.startswith("M\t")]
        check(r.returncode == 0 and line, "profile_memory=%s runs (%d %s)" % (scope, r.returncode, r.stderr[-300:]))
        results[scope] = [int(x) for x in line[0].split("\t")[1:]] if line else [0, 0, 0, 0]
    keep, left_out, processes, recorded = results["true"]
    check(keep == 0 and left_out == processes - 1 and left_out >= (3 if compiler else 1) and recorded == 1,
          "profile_memory=true: only the command's allocations, the %d programs it ran left out "
          "(keep %d bytes, %d left out of %d processes, %d recorded)" % (processes - 1, keep, left_out, processes, recorded))
    keep, left_out, processes, recorded = results['"all"']
    check(keep >= 1024 * 1024 and left_out == 0 and recorded >= 2,
          'profile_memory="all": every process (keep %d bytes, %d left out, %d of %d processes recorded)'
          % (keep, left_out, recorded, processes))
    # The run summary names what was left out; --profile-memory=all has nothing to name.
    for flag, named in (("--profile-memory", True), ("--profile-memory=all", False)):
        r = subprocess.run([env.profsh, "run", flag, "--activities", "nvtx,itt", "--no-table", "-o",
                            os.path.join(env.work, "scope.profsh"), "--", "/bin/sh", "-c", command],
                           capture_output=True, text=True, cwd=env.work, timeout=300)
        said = re.search(r"memory of (\d+) process(?:es)? not recorded \(([^;]*);", r.stderr)
        if named:
            programs = said.group(2) if said else ""
            check(r.returncode == 0 and said and "1 nvtx_workload" in programs
                  and (not compiler or "cc1" in programs),
                  "%s: the summary counts and names the left-out programs (%s)" % (flag, r.stderr[-400:]))
        else:
            check(r.returncode == 0 and not said, "%s: nothing left out (%s)" % (flag, r.stderr[-400:]))
    r = subprocess.run([env.profsh, "run", "--profile-memory=some", "--", "true"], capture_output=True, text=True,
                       timeout=60)
    check(r.returncode == 2 and "'workload' and 'all'" in r.stderr,
          "--profile-memory=some is refused, naming the scopes (%d %s)" % (r.returncode, r.stderr.strip()))


CHECKS = {"nested": check_nested, "messages": check_messages, "processes": check_processes, "two_objects": check_two_objects, "ranks": check_ranks, "startend": check_start_end,
          "attributes": check_attributes, "unbalanced": check_unbalanced, "itt": check_itt,
          "exit_codes": check_exit_codes, "injection_owned": check_injection_owned,
          "session": check_session_privacy, "without_session": check_without_session,
          "sigkill": check_sigkill, "signals": check_signals, "stress": check_stress, "memory": check_memory,
          "memory_scope": check_memory_scope}


def main():
    profsh, nvtx, itt, tests_dir = (os.path.abspath(a) for a in sys.argv[1:5])
    selected = sys.argv[5:] or list(CHECKS)
    with tempfile.TemporaryDirectory(prefix="profsh_collector_") as work:
        # Session folders go here, so that any a run leaves behind is seen (and then removed).
        tmp = os.path.join(work, "tmp")
        os.mkdir(tmp)
        os.environ["TMPDIR"] = tmp
        env = Env(profsh, nvtx, itt, tests_dir, work)
        for name in selected:
            print("== " + name, flush=True)
            CHECKS[name](env)
        left = [n for n in os.listdir(tmp) if n.startswith("profsh-session-")]
        check(not left, "every session folder a run made is gone (%s)" % ", ".join(left))
    print("collector: %d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
