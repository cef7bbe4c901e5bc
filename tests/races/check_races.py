#!/usr/bin/env python3
"""The collector under ThreadSanitizer: builds the runtime and the race workloads with clang's
-fsanitize=thread (tests/races/CMakeLists.txt, a build of their own), runs each workload under
`profsh run` with that collector (PROFSH_COLLECTOR), and fails on any TSan report from any
process of the session, then checks the trace's exact counts as check_collector.py does.
Exits 77 (skipped) only when clang++ cannot build a ThreadSanitizer program.

Usage: check_races.py PROFSH CMAKE SOURCE_DIR BUILD_DIR NVTX3_INCLUDE_DIR [SCENARIO...]
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "collector"))
import check_collector  # noqa: E402  (its Dump and the Lua that dumps a trace)

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def tsan_toolchain(build_dir):
    """clang++ that builds and runs a -fsanitize=thread program, or None."""
    clang = shutil.which("clang++")
    if clang is None:
        return None, "clang++ is not installed"
    os.makedirs(build_dir, exist_ok=True)
    probe = os.path.join(build_dir, "tsan_probe")
    r = subprocess.run([clang, "-fsanitize=thread", "-x", "c++", "-", "-o", probe], input="int main() { return 0; }\n",
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, "clang++ cannot link a ThreadSanitizer program: " + r.stderr.strip()[-300:]
    r = subprocess.run([probe], capture_output=True, text=True)
    if r.returncode != 0:
        return None, "a ThreadSanitizer program does not run here: " + r.stderr.strip()[-300:]
    return clang, None


# "(module+0x1234)" in an unsymbolized report. TSan cannot symbolize while it runs: the symbolizer
# it starts inherits LD_PRELOAD, and the TSan-built collector loads only into TSan programs.
FRAME = re.compile(r"\(([^()+ ]+)\+(0x[0-9a-f]+)\)")


def symbolized(report, modules):
    tool = shutil.which("llvm-symbolizer") or next(iter(sorted(glob.glob("/usr/bin/llvm-symbolizer-*"))), None)
    lines = []
    for line in report.splitlines():
        m = FRAME.search(line)
        path = modules.get(os.path.basename(m.group(1))) if m else None
        if tool and path:
            r = subprocess.run([tool, "--obj=" + path, m.group(2)], capture_output=True, text=True, env={})
            where = " ".join(r.stdout.strip().split("\n")[:2])
            line = line[:m.start()] + where
        lines.append(line)
    return "\n".join(lines)


class Races:
    def __init__(self, profsh, build_dir, work):
        self.profsh, self.work = profsh, work
        self.workload = os.path.join(build_dir, "race_workload")
        self.collector = os.path.join(build_dir, "libprofsh_collector_tsan.so")
        self.modules = {"race_workload": self.workload, "libprofsh_collector_tsan.so": self.collector}
        self.tsan_dir = os.path.join(work, "tsan")
        os.makedirs(self.tsan_dir)
        self.dumper = check_collector.Env(profsh, None, None, None, work)

    def env(self, **extra):
        e = dict(os.environ, PROFSH_COLLECTOR=self.collector, **extra)
        # die_after_fork=0: the collector starts a drain thread in every forked child.
        e["TSAN_OPTIONS"] = ("exitcode=66 die_after_fork=0 symbolize=0 second_deadlock_stack=1 log_path=%s/tsan"
                             % self.tsan_dir)
        return e

    def reports_clean(self, what):
        """No TSan report from any process of the scenario (each writes tsan.<pid>)."""
        logs = sorted(glob.glob(os.path.join(self.tsan_dir, "tsan.*")))
        for log in logs:
            with open(log) as f:
                text = f.read()
            print(symbolized(text, self.modules)[-6000:])
            os.unlink(log)
        check(not logs, "%s: no ThreadSanitizer report (%d processes reported)" % (what, len(logs)))

    def run(self, name, args, *run_options, env=None, timeout=300):
        out = os.path.join(self.work, name + ".profsh")
        r = subprocess.run([self.profsh, "run", "--no-table", "-o", out, *run_options, "--", self.workload, *args],
                           capture_output=True, text=True, env=env or self.env(), timeout=timeout)
        check(r.returncode == 0, "%s: the workload exits 0 under profsh run (%d: %s)" %
              (name, r.returncode, r.stderr.strip()[-400:]))
        self.reports_clean(name)
        return r, out

    def dump(self, trace):
        return self.dumper.dump(trace)

    def lua(self, code, *args, timeout=300):
        script = os.path.join(self.work, "script.lua")
        with open(script, "w") as f:
            f.write(code)
        return subprocess.run([self.profsh, script, *args], capture_output=True, text=True, timeout=timeout,
                              env=self.env())


def no_drops(d):
    return all(d.drops.get(k) == 0 for k in ("dropped_ranges", "dropped_events", "streams_cut_short"))


def check_threads(t):
    # 30 waves of 8 threads, each 50 "work" ranges and one left open at its exit, beside a busy thread.
    waves = 30
    r, out = t.run("threads", ["threads", str(waves)])
    busy = int(r.stdout.split()[-1]) if r.stdout.split()[-2:-1] == ["busy"] else -1
    d = t.dump(out)
    left = d.named("left open")
    check(d.count("work") == waves * 8 * 50 and len(left) == waves * 8 and all(e["open"] for e in left),
          "threads starting and exiting with a range open: work %d/%d, left open %d/%d" %
          (d.count("work"), waves * 8 * 50, len(left), waves * 8))
    check(d.drops.get("ranges_open_at_thread_exit") == waves * 8,
          "each exiting thread's open range is counted as open at its exit (%s)" % d.drops.get("ranges_open_at_thread_exit"))
    check(d.count("busy") == busy and d.count("busy start") == busy and no_drops(d),
          "the busy thread's ranges all recorded beside them (%d, %d/%d), nothing dropped: %s" %
          (d.count("busy"), d.count("busy start"), busy, d.drops))


def check_fork(t):
    forks = 12
    r, out = t.run("fork", ["fork", str(forks)])
    d = t.dump(out)
    pids = {m["pid"] for m in d.meta}
    parent = [m for m in d.meta if m["ppid"] not in pids]  # the children's command line is the parent's
    check(len(parent) == 1, "fork: the parent is in the trace once")
    if not parent:
        return
    ppid = parent[0]["pid"]
    children = [m["pid"] for m in d.meta if m["ppid"] == ppid]
    exact = [p for p in children if d.count("child", p) == 10 and d.count("child thread", p) == 10 and
             d.count("in child domain", p) == 1]
    check(len(children) == forks and len(exact) == forks,
          "fork while another thread is inside the collector: %d/%d children, %d with exactly their 10 + 10 + 1 ranges"
          % (len(children), forks, len(exact)))
    named = [e for e in d.named("in child domain") if e["args"].get("domain") == "child domain"]
    check(len(named) == forks, "each child's domain is named in its stream (%d/%d): metadata the parent was "
          "publishing at the fork does not hold up the child's" % (len(named), forks))
    check(d.count("parent", ppid) == forks, "the parent's own ranges (%d/%d)" % (d.count("parent", ppid), forks))
    check(all(m["ended"] != "cut short (killed, or still running)" for m in d.meta) and no_drops(d) and not d.warnings,
          "every stream ended cleanly, nothing dropped, no warnings: %s" % d.warnings[:3])


def check_exec(t):
    r, out = t.run("exec", ["exec"])
    d = t.dump(out)
    images = sorted(d.meta, key=lambda m: m["exec_index"])
    check(len(images) == 2 and images[0]["pid"] == images[1]["pid"] and images[0]["ended"].startswith("exec ")
          and images[1]["command"].endswith("exec_child"),
          "exec from a thread while two others record: one pid, two images, the first ending with its exec: %s" %
          [(m["exec_index"], m["ended"]) for m in images])
    check(d.count("before exec") == 5 and d.count("after exec") == 10,
          "the exec'ing thread's ranges before, the new image's after (%d/5, %d/10)" %
          (d.count("before exec"), d.count("after exec")))
    # The busy threads die with the old image, a range open on each, at most.
    check(d.drops.get("streams_cut_short") == 0 and all("still open when" in w for w in d.warnings),
          "no stream cut short, no warnings but ranges open at the exec: %s" % d.warnings[:3])


def check_start_end(t):
    r, out = t.run("startend", ["startend", "4", "300"])
    d = t.dump(out)
    h = d.named("handoff")
    check(len(h) == 1200 and all(not e["open"] for e in h) and d.drops.get("ends_of_unknown_ranges") == 0,
          "start/end ranges ended on other threads, their starters gone: %d/1200 closed, %d open" %
          (len(h), sum(1 for e in h if e["open"])))


def check_memory(t):
    """The memory hooks' code (built into the workload, called directly: TSan's malloc would come
    before a preloaded libprofsh_memory.so) from waves of threads and a child forked in each."""
    # Sized so that the dump (200 000 events at most, a [memory] instant and a counter value each)
    # holds every event.
    waves, rounds = 4, 100
    r, out = t.run("memory", ["memory", str(waves), str(rounds)])
    f = r.stdout.split()
    want = {"parent": int(f[1]), "child": int(f[3])} if len(f) == 4 else {}
    d = t.dump(out)
    by_pid = {}
    for e in d.named("[memory]"):
        by_pid.setdefault(e["pid"], []).append(int(e["args"].get("Bytes", "0")))
    parent = [m["pid"] for m in d.meta if m["ppid"] not in by_pid]
    counts = sorted((len(v), p in parent) for p, v in by_pid.items())
    check(counts == sorted([(want.get("parent"), True)] + [(want.get("child"), False)] * waves),
          "memory hooks from 8 threads a wave and a forked child: every allocation and free reported "
          "(events per process %s, want %s)" % (counts, want))
    mmaps = [b for v in by_pid.values() for b in v if abs(b) == 1 << 20]
    check(all(sum(v) == 0 for v in by_pid.values()) and len(mmaps) == 2 * ((rounds + 19) // 20) * 10 * waves,
          "each free reports the bytes its allocation did (net 0 in each process), and every 1 MiB mmap "
          "and munmap (%d) through the size table" % len(mmaps))
    check(d.count("alloc") == 10 * waves and no_drops(d) and not d.warnings,
          "their ranges (%d/%d), nothing dropped, no warnings: %s" % (d.count("alloc"), 10 * waves, d.warnings[:3]))


def check_itt(t):
    """ITT from many threads: domains and string handles created by several threads at once,
    tasks, a counter adopted on first use, threads exiting, forks."""
    waves, tasks = 6, 96
    r, out = t.run("itt", ["itt", str(waves), str(tasks)])
    d = t.dump(out)
    names = ["d%d task %d" % (k, i) for k in range(4) for i in range(8)]
    per_name = waves * 2 * tasks // 8
    wrong = [n for n in names if d.count(n) != per_name]
    check(not wrong, "ITT tasks from 8 threads a wave, each name %d times: %s" %
          (per_name, [(n, d.count(n)) for n in wrong][:4]))
    misplaced = [e for e in d.events if e["name"] in names and
                 e["args"].get("domain") != "itt domain " + e["name"][1]]
    check(not misplaced, "each task in the domain its thread created (%d elsewhere)" % len(misplaced))
    counter = [int(e["args"].get("value", "-1")) for e in d.events if e["ph"] == "C" and e["name"] == "itt early/itt tasks"]
    total = waves * 8 * tasks
    check(len(counter) == total and sorted(counter) == list(range(1, total + 1)),
          "a counter made before the collector loaded, adopted once: %d values, each of 1..%d once" %
          (len(counter), total))
    children = [m["pid"] for m in d.meta if d.count("child task", m["pid"]) == 16 and
                all(e["args"].get("domain") == "itt child domain" for e in d.named("child task"))]
    check(len(children) == waves and d.count("itt load") == 1,
          "each forked child's 16 tasks in its domain (%d/%d children), the loading call's task" %
          (len(children), waves))
    workers = [th for th in d.threads if th[2] == "itt worker"]
    check(len(workers) == waves * 8 and no_drops(d) and not d.warnings,
          "every worker thread named (%d/%d), nothing dropped, no warnings: %s" %
          (len(workers), waves * 8, d.warnings[:3]))


WINDOWS = r"""
local p = profsh.profile{
  activities = {"nvtx"},
  schedule = profsh.schedule{wait = 1, warmup = 1, active = 2, ["repeat"] = 4},
  step_marker = "^step$", drain_ms = 1,
  on_trace_ready = function(t)
    local names = {}
    for _, a in ipairs(t:key_averages()) do names[#names + 1] = a.key .. "=" .. a.count end
    table.sort(names)
    print(t.steps[1], t.steps[2], table.concat(names, ","))
  end}
print("status", p:run{arg[1], "steps", "20", "40", "0"})
"""


def check_windows(t):
    # Steps follow each other with no pause and the drain runs every millisecond: rounds end
    # mid-step, and window ends race the workers' last ranges.
    r = t.lua(WINDOWS, t.workload)
    t.reports_clean("windows")
    lines = r.stdout.splitlines()
    check(lines[-1:] == ["status\t0"], "windows: the run completes (%s)" % r.stderr.strip()[-300:])
    want = ["%d\t%d\tstep=2,w_%d=160,w_%d=160" % (a, a + 1, a, a + 1) for a in (2, 6, 10, 14)]
    check(lines[:-1] == want, "a drain racing each window end: every window holds exactly its steps' 4 x 40 "
          "ranges: %s" % lines[:-1])


def check_on_demand(t):
    """Requests arriving mid-window: a second request while the first one's window is open."""
    run = subprocess.Popen([t.profsh, "run", "--on-demand", "--step-marker", "^step$", "--drain-ms", "1", "--no-table",
                            "--", t.workload, "steps", "300", "10", "5"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=t.work, env=t.env())
    workload = check_collector.workload_of(run)
    check(workload is not None, "on demand: found the workload")
    if workload is None:
        run.kill()
        run.wait()
        return
    time.sleep(0.5)
    outs = [os.path.join(t.work, "demand%d.profsh" % i) for i in range(3)]
    clients = []
    for i, out in enumerate(outs):
        clients.append(subprocess.Popen([t.profsh, "trace", "--pid", str(workload), "--steps", "4", "-o", out,
                                         "--timeout", "120"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, env=t.env()))
        time.sleep(0.02)  # the next request arrives while this one's window is being recorded
    for i, c in enumerate(clients):
        _, err = c.communicate(timeout=200)
        check(c.returncode == 0 and os.path.exists(outs[i]), "on demand: request %d gets a trace (%s)" %
              (i, err.strip()[-300:]))
    _, err = run.communicate(timeout=300)
    check(run.returncode == 0, "on demand: the workload ran to its end (%d: %s)" % (run.returncode, err.strip()[-300:]))
    t.reports_clean("on demand")
    seen_steps = []
    for i, out in enumerate(outs):
        if not os.path.exists(out):
            continue
        r = t.lua(r"""
local t = profsh.load(arg[1])
local names = {}
for _, a in ipairs(t:key_averages()) do names[#names + 1] = a.key .. "=" .. a.count end
table.sort(names)
print(t.steps[2] - t.steps[1] + 1, table.concat(names, ","))
""", out)
        f = r.stdout.split()
        counts = dict(kv.split("=") for kv in f[1].split(",")) if len(f) == 2 else {}
        work = {k: v for k, v in counts.items() if k.startswith("w_")}
        check(f[:1] == ["4"] and counts.get("step") == "4" and len(work) == 4 and set(work.values()) == {"40"},
              "on demand: request %d recorded exactly 4 whole steps (4 workers x 10 ranges each): %s" %
              (i, r.stdout.strip() or r.stderr.strip()[-200:]))
        seen_steps += sorted(work)
    check(len(seen_steps) == len(set(seen_steps)), "on demand: each request has a window of its own (no step twice)")


SCENARIOS = {"threads": check_threads, "fork": check_fork, "exec": check_exec, "startend": check_start_end,
             "windows": check_windows, "on_demand": check_on_demand, "memory": check_memory, "itt": check_itt}


def main():
    profsh, cmake, source, build, nvtx = (os.path.abspath(a) for a in sys.argv[1:6])
    wanted = sys.argv[6:] or list(SCENARIOS)
    clang, why = tsan_toolchain(build)
    if clang is None:
        print("SKIP: " + why)
        return 77
    r = subprocess.run([cmake, "-S", os.path.join(source, "tests", "races"), "-B", build, "-DCMAKE_CXX_COMPILER=" + clang,
                        "-DCMAKE_BUILD_TYPE=", "-DPROFSH_ROOT=" + source, "-DNVTX3_INCLUDE_DIR=" + nvtx],
                       capture_output=True, text=True)
    if r.returncode == 0:
        r = subprocess.run([cmake, "--build", build, "-j", str(os.cpu_count() or 2)], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout[-3000:] + r.stderr[-3000:])
        print("FAIL the ThreadSanitizer build of the collector and the race workloads")
        return 1
    work = tempfile.mkdtemp(prefix="profsh-races-")
    try:
        t = Races(profsh, build, work)
        for name in wanted:
            started = time.monotonic()
            SCENARIOS[name](t)
            print("     (%s: %.1f s)" % (name, time.monotonic() - started), flush=True)
    finally:
        if not os.environ.get("PROFSH_RACES_KEEP"): shutil.rmtree(work, ignore_errors=True)
    print("races: %d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
