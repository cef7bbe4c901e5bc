#!/usr/bin/env python3
"""Faults injected into real runs: for each, the workload behaves as it does without profsh
(exit status, stdout, the files it writes), the trace loads, and what was lost is counted and
reported. Crashes of the workload, SIGKILL of the workload and signals sent to profsh are in
tests/collector/check_collector.py; this adds what happens around them.

Usage: check_faults.py PROFSH FAULT_WORKLOAD STATIC_CHILD [CHECK...]
"""
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "collector"))
from check_collector import workload_of  # noqa: E402  (profsh's child, once it has one)

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def skip(what):
    print("skip " + what, flush=True)


# Lua printing what a trace holds: ranges per name, processes, losses and warnings.
DUMP = r"""
local t = profsh.load(arg[1])
for _, a in ipairs(t:key_averages()) do print("A", a.key, a.count) end
local m = t.metadata.profsh
for _, p in ipairs(m.processes) do print("P", p.pid, p.ppid, p.exec_index, p.ended, p.command) end
for _, k in ipairs({"dropped_ranges", "dropped_events", "events_without_thread_slot", "streams_cut_short"}) do
  print("D", k, m[k] or 0)
end
for _, w in ipairs(t.warnings) do print("W", w) end
"""


class Dump:
    def __init__(self, text, loaded):
        self.loaded, self.counts, self.processes, self.drops, self.warnings = loaded, {}, [], {}, []
        for line in text.splitlines():
            f = line.split("\t")
            if f[0] == "A":
                self.counts[f[1]] = int(f[2])
            elif f[0] == "P":
                self.processes.append({"pid": f[1], "ppid": f[2], "exec_index": int(f[3]), "ended": f[4],
                                       "command": f[5]})
            elif f[0] == "D":
                self.drops[f[1]] = int(f[2])
            elif f[0] == "W":
                self.warnings.append(f[1])

    def count(self, name):
        return self.counts.get(name, 0)


class Env:
    def __init__(self, profsh, workload, static_child, work):
        self.profsh, self.workload, self.static_child, self.work = profsh, workload, static_child, work
        self.tmp = os.path.join(work, "tmp")
        self.dump_script = os.path.join(work, "dump.lua")
        with open(self.dump_script, "w") as f:
            f.write(DUMP)

    def path(self, name):
        return os.path.join(self.work, name)

    def run(self, args, output, env=None, timeout=300, options=()):
        return subprocess.run([self.profsh, "run", "--no-table", *options, "-o", output, "--", self.workload, *args],
                              capture_output=True, text=True, cwd=self.work, env=env, timeout=timeout)

    def bare(self, args, timeout=300):
        """The workload without profsh: what it does on its own."""
        return subprocess.run([self.workload, *args], capture_output=True, text=True, cwd=self.work, timeout=timeout)

    def dump(self, trace):
        r = subprocess.run([self.profsh, self.dump_script, trace], capture_output=True, text=True, timeout=300)
        check(r.returncode == 0, "the trace %s loads (%s)" % (os.path.basename(trace), r.stderr.strip()[-300:]))
        return Dump(r.stdout, r.returncode == 0)

    def sessions(self):
        return [os.path.join(self.tmp, n) for n in os.listdir(self.tmp) if n.startswith("profsh-session-")]


def same_behaviour(env, name, r, bare):
    check(r.returncode == bare.returncode and r.stdout == bare.stdout,
          "%s: exit status and stdout as without profsh (%d %r / %d %r)" %
          (name, r.returncode, r.stdout[-120:], bare.returncode, bare.stdout[-120:]))


def wait_for_file(path, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline and not os.path.exists(path):
        time.sleep(0.02)
    time.sleep(0.05)  # written and closed
    with open(path) as f:
        return f.read()


def check_full_filesystem(env):
    # The session folder on a 64 KiB tmpfs: the stream fills it in the first drain round.
    small = env.path("small")
    os.mkdir(small)
    mount = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=1777", "tmpfs", small],
                           capture_output=True, text=True)
    if mount.returncode != 0:
        skip("a full file system: cannot mount a tmpfs here (%s)" % mount.stderr.strip())
        return
    try:
        out = env.path("full.profsh")
        n = 200000
        r = env.run(["plain", str(n)], out, env=dict(os.environ, TMPDIR=small))
        check(r.returncode == 0 and r.stdout == "ranges %d\n" % n,
              "full file system: the workload's status and output are its own (%d %r)" % (r.returncode, r.stdout))
        check("No space left on device" in r.stderr and "trace saved to" in r.stderr,
              "full file system: the failed write is said, and what was written is saved: %s" % r.stderr[-300:])
        d = env.dump(out)
        lost = [w for w in d.warnings if "could not be written" in w]
        unwritten = int(lost[0].split(": ")[-1].split()[0]) if lost else -1
        check(lost and 2 * d.count("work") + unwritten == 2 * n,
              "full file system: recorded and not written add up (2 x %d ranges + %d events = %d): %s"
              % (d.count("work"), unwritten, 2 * n, lost[:1]))
        check(d.drops.get("streams_cut_short") == 0, "full file system: the stream still ends cleanly")
        check(os.listdir(small) == [], "full file system: the session folder is removed afterwards")
    finally:
        subprocess.run(["umount", small])


def check_folder_removed(env):
    done = env.path("removed.done")
    proc = subprocess.Popen([env.profsh, "run", "--no-table", "-o", env.path("removed.profsh"), "--", env.workload,
                             "steady", "400", done], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=env.work)
    time.sleep(0.2)
    for folder in env.sessions():
        shutil.rmtree(folder)
    out, err = proc.communicate(timeout=120)
    check(proc.returncode == 0 and out == "steady 400\n" and open(done).read() == "steady 400\n",
          "session folder removed while running: the workload's status, output and file (%d %r)" % (proc.returncode, out))
    check("was removed while it ran" in err and "kept in" not in err,
          "and profsh says the recording is gone (not that it is kept): %s" % err.strip()[-200:])


def check_close_fds(env):
    folder = env.path("files")
    os.mkdir(folder)
    out = env.path("close_fds.profsh")
    r = env.run(["close_fds", folder, "5"], out)
    check(r.returncode == 0, "close every descriptor: the workload exits 0 (%d %s)" % (r.returncode, r.stderr[-200:]))
    intact = all(open(os.path.join(folder, "file%d" % i), "rb").read() ==
                 "".join("file %d line %d\n" % (i, k) for k in range(10)).encode() for i in range(5))
    check(intact, "close every descriptor, then open files (they take the stream's numbers): each holds "
          "exactly what the workload wrote")
    d = env.dump(out)
    check(d.count("before close") == 100 and d.count("after close") == 1000 and d.count("child after close") == 10,
          "and the collector goes on in its own file (%d/100 %d/1000 %d/10)" %
          (d.count("before close"), d.count("after close"), d.count("child after close")))


def check_daemon(env):
    done = env.path("daemon.done")
    out = env.path("daemon.profsh")
    r = env.run(["daemon", done], out)
    check(r.returncode == 0 and r.stdout == "", "daemon(3): profsh returns with the parent's status (%d)" % r.returncode)
    check(wait_for_file(done, 10) == "daemon done\n", "the daemon goes on and finishes after profsh returned")
    check(os.path.exists(out), "daemon(3): profsh saved the trace (profsh said: %s)" % r.stderr.strip()[-600:])
    d = env.dump(out)
    check(d.count("before daemon") == 50, "the parent's ranges up to the fork are all there (%d/50), though libc "
          "ended it without exit handlers" % d.count("before daemon"))
    check(d.drops.get("streams_cut_short", 0) >= 1 and any("did not finish" in w for w in d.warnings),
          "the unfinished streams are reported: %s" % d.warnings[-1:])


def check_setuid(env):
    if os.geteuid() != 0:
        skip("setuid: needs root to become nobody")
        return
    out = env.path("setuid.profsh")
    r = env.run(["setuid"], out)
    same_behaviour(env, "setuid to nobody", r, env.bare(["setuid"]))
    d = env.dump(out)
    check(d.count("as root") == 100 and d.count("as nobody") == 100,
          "setuid: the open stream goes on (%d/100 as root, %d/100 as nobody)" % (d.count("as root"), d.count("as nobody")))
    check(d.count("child as nobody") == 0 and d.count("work") == 0,
          "setuid: a child and an exec'd image cannot open a stream in root's session folder and record nothing")


def check_spawns(env):
    out = env.path("spawn.profsh")
    r = env.run(["spawn"], out)
    same_behaviour(env, "vfork and posix_spawn", r, env.bare(["spawn"]))
    d = env.dump(out)
    check(d.count("spawner") == 20 and d.count("work") == 24 and len(d.processes) == 3,
          "vfork + exec and posix_spawn: each child its own process (%d/20, %d/24, %d processes)" %
          (d.count("spawner"), d.count("work"), len(d.processes)))


def check_clone(env):
    out = env.path("clone.profsh")
    r = env.run(["clone"], out)
    same_behaviour(env, "clone", r, env.bare(["clone"]))
    d = env.dump(out)
    check(d.count("cloner") == 20 and d.count("work") == 17,
          "clone without fork: the parent's ranges and the exec'd child's (%d/20, %d/17)" % (d.count("cloner"), d.count("work")))
    check(d.count("clone child") == 0 and not d.warnings,
          "the clone children's own ranges (no fork handler ran) are not recorded, and nothing breaks")


def check_static_exec(env):
    out = env.path("static.profsh")
    r = env.run(["exec_static", env.static_child], out)
    same_behaviour(env, "exec of a static binary", r, env.bare(["exec_static", env.static_child]))
    d = env.dump(out)
    check(d.count("before static exec") == 30 and len(d.processes) == 1 and d.processes[0]["ended"].startswith("exec "),
          "exec of a static binary: the ranges before it, the stream ended by the exec (%s)" % d.processes[:1])


def check_threads(env):
    out = env.path("threads.profsh")
    r = env.run(["threads", "10000", "8"], out)
    check(r.returncode == 0 and r.stdout == "threads 10000\n", "10 000 short threads run (%d %r)" % (r.returncode, r.stdout))
    d = env.dump(out)
    total = d.count("thread") + d.drops.get("dropped_ranges", 0) + d.drops.get("events_without_thread_slot", 0) // 2
    check(total == 20000, "10 000 threads x 2 ranges: recorded %d + dropped %d + without a slot %d = 20000" %
          (d.count("thread"), d.drops.get("dropped_ranges", 0), d.drops.get("events_without_thread_slot", 0) // 2))


def check_children(env):
    out = env.path("children.profsh")
    r = env.run(["children", "1000", "4"], out)
    check(r.returncode == 0 and r.stdout == "children 1000 failed 0\n",
          "1 000 child processes run (%d %r)" % (r.returncode, r.stdout))
    d = env.dump(out)
    check(len(d.processes) == 1001 and d.count("child") == 3000 and d.drops.get("streams_cut_short") == 0,
          "1 000 children (half ending with _exit): %d processes, %d/3000 ranges, every stream ended" %
          (len(d.processes), d.count("child")))


def check_crashes(env):
    for how, status in (("segv", 139), ("handled_segv", 3), ("abort", 134), ("terminate", 134)):
        out = env.path("crash-%s.profsh" % how)
        r = env.run(["crash", how], out)
        bare = env.bare(["crash", how])
        # The shell's view of a signal death (128 + n) is profsh's exit status.
        bare_status = bare.returncode if bare.returncode >= 0 else 128 - bare.returncode
        check(r.returncode == status == bare_status and r.stdout == bare.stdout,
              "%s: exit status %d and stdout as without profsh (%d %r)" % (how, status, r.returncode, r.stdout[-100:]))
        check("0 on threads not the program's" in r.stdout and "signal " not in r.stdout,
              "%s: the program's handlers are its own (none added; process signals never land on the collector's "
              "thread)" % how)
        if how == "terminate":
            check("terminate called after throwing" in r.stderr, "std::terminate: the runtime's message is intact")
        d = env.dump(out)
        check(d.count("before crash") == 100, "%s: every range before the crash is in the trace (%d/100)" %
              (how, d.count("before crash")))
        cut = 0 if how == "handled_segv" else 1
        check(d.drops.get("streams_cut_short") == cut, "%s: %s" % (how, "a handler's _exit ends the stream cleanly" if not cut
                                                                   else "the cut stream is reported"))


def check_profsh_killed(env):
    # This script adopts orphans (a subreaper), so that it can wait for the workload once profsh is gone.
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
        skip("profsh killed: cannot become a subreaper")
        return
    done = env.path("orphan.done")
    with open(env.path("orphan.out"), "w") as stdout:
        proc = subprocess.Popen([env.profsh, "run", "--no-table", "-o", env.path("orphan.profsh"), "--", env.workload,
                                 "steady", "600", done], stdout=stdout, stderr=subprocess.DEVNULL, cwd=env.work)
        workload = workload_of(proc)
        time.sleep(0.3)
        proc.kill()
        proc.wait()
    check(workload is not None, "found the workload")
    if workload is None:
        return
    _, status = os.waitpid(workload, 0)
    check(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and open(done).read() == "steady 600\n"
          and open(env.path("orphan.out")).read() == "steady 600\n",
          "profsh killed with SIGKILL: the workload runs to its end, unharmed (status %d)" % status)
    left = env.sessions()
    check(len(left) == 1, "the session folder stays (%d)" % len(left))
    if left:
        d = env.dump(left[0])
        check(d.count("steady") == 600 and d.drops.get("streams_cut_short") == 0,
              "and loads, whole: %d/600 ranges, every stream ended" % d.count("steady"))
        for folder in left:
            shutil.rmtree(folder)


MEMORY = r"""
local p = profsh.profile{activities = {"nvtx"}, profile_memory = true}
local status = p:run{arg[1], "allocate", arg[2], arg[3]}
local s = p.summary
print(status, s.memory_events, s.dropped_events, s.ranges, s.dropped_ranges)
"""


def check_memory(env, threads=8, per_thread=125000):
    script = env.path("memory.lua")
    with open(script, "w") as f:
        f.write(MEMORY)

    def run(n):
        r = subprocess.run([env.profsh, script, env.workload, str(threads), str(n)], capture_output=True, text=True,
                           cwd=env.work, timeout=600)
        fields = r.stdout.split("\n")[-2].split() if r.stdout.count("\n") >= 2 else []
        check(r.returncode == 0 and len(fields) == 5 and fields[0] == "0",
              "profile_memory, %d threads x %d allocations: runs (%s)" % (threads, n, r.stderr[-200:] or r.stdout))
        return [int(x) for x in fields] if len(fields) == 5 else None

    # One allocation per thread tells the allocations the program makes besides its own.
    one = run(1)
    many = run(per_thread)
    if not one or not many:
        return
    besides = one[1] + one[2] - 2 * threads
    made = 2 * threads * per_thread  # each block allocated and freed
    check(many[1] + many[2] == made + besides,
          "%d allocations from %d threads: memory events recorded %d + dropped %d = %d + %d of the runtime (exact)"
          % (threads * per_thread, threads, many[1], many[2], made, besides))
    ranges = (per_thread + 999) // 1000 * threads
    check(many[3] + many[4] == ranges, "and their ranges: recorded %d + dropped %d = %d" % (many[3], many[4], ranges))


CHECKS = {"full_filesystem": check_full_filesystem, "folder_removed": check_folder_removed,
          "close_fds": check_close_fds, "daemon": check_daemon, "setuid": check_setuid, "spawn": check_spawns,
          "clone": check_clone, "static_exec": check_static_exec, "threads": check_threads,
          "children": check_children, "crashes": check_crashes, "profsh_killed": check_profsh_killed,
          "memory": check_memory}
# The full size: 10 M allocations from 8 threads (about 25 s and 3 GB in the reader), run
# by its own test in the release pass only.
EXTRA_CHECKS = {"memory_10m": lambda env: check_memory(env, threads=8, per_thread=1250000)}


def main():
    profsh, workload, static_child = (os.path.abspath(a) for a in sys.argv[1:4])
    selected = sys.argv[4:] or list(CHECKS)
    with tempfile.TemporaryDirectory(prefix="profsh_faults_") as work:
        env = Env(profsh, workload, static_child, work)
        os.mkdir(env.tmp)
        os.environ["TMPDIR"] = env.tmp  # session folders go here, so that any left behind is seen
        for name in selected:
            if name not in CHECKS and name not in EXTRA_CHECKS:
                sys.exit("check_faults.py: no check named %r (%s)" % (name, ", ".join(list(CHECKS) + list(EXTRA_CHECKS))))
            print("== " + name, flush=True)
            start = time.time()
            {**CHECKS, **EXTRA_CHECKS}[name](env)
            print("   (%.1f s)" % (time.time() - start), flush=True)
        left = env.sessions()
        check(not left, "every session folder a run made is gone (%s)" % ", ".join(left))
    print("faults: %d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
