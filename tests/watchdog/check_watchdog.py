#!/usr/bin/env python3
"""The flight recorder's hang and on-demand dumps, end to end (tests/watchdog/hang_workload):

- a hang (a thread blocks in a fake collective, the main thread waits for it): --watchdog dumps
  within its period, the dump names the blocked range and collective (with its sequence number)
  and the main thread's open ranges, innermost first, and the workload runs on to its end; with
  cpu on, the last few stack samples of each thread (a spinning collective's among them);
- --watchdog-kill: the hung workload is killed after its dump;
- on demand: profsh trace --pid PID --dump, and SIGUSR2 to profsh; --steps refused by a flight
  recorder's run, --dump by a run without one;
- two processes: a dump asked of one, or a trigger in one, makes both dump the same time span;
- SIGKILL of the workload after a dump: the dump survives whole and reads.

Usage: check_watchdog.py PROFSH HANG_WORKLOAD
"""
import glob
import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import time

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


DUMP_INFO = r"""
local t = profsh.load(arg[1])
local m = t.metadata.profsh or {}
print("reason", m.reason)
print("pid", m.pid)
if m.span then print("span", m.span[1], m.span[2]) end
if m.hang then
  for _, p in ipairs(m.hang.processes) do
    for _, r in ipairs(p.open) do print("open", p.pid, r.tid, r.kind, r.name) end
    for _, x in ipairs(p.samples or {}) do print("sample", p.pid, x.tid, x.stack) end
    for _, c in ipairs(p.collectives) do
      print("collective", p.pid, c.name, c.seq, tostring(c.seq_recorded), tostring(c.open))
    end
  end
end
local names = {}
for _, a in ipairs(t:key_averages()) do names[#names + 1] = a.key end
table.sort(names)
print("names", table.concat(names, ","))
print("events", t.event_count)
"""


def dump_info(profsh, path):
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(DUMP_INFO)
    try:
        r = subprocess.run([profsh, f.name, path], capture_output=True, text=True, timeout=120)
    finally:
        os.unlink(f.name)
    info = {"open": [], "collective": [], "sample": []}
    for line in r.stdout.splitlines():
        key, _, rest = line.partition("\t")
        if key in ("open", "collective", "sample"):
            info[key].append(rest.split("\t"))
        else:
            info[key] = rest
    info["ok"] = r.returncode == 0
    info["stderr"] = r.stderr
    return info


def saved_paths(stdout):
    return [l[len("saved "):] for l in stdout.splitlines() if l.startswith("saved ")]


def child_of(proc, timeout=10):
    deadline = time.time() + timeout
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


FLIGHT = ["--flight-recorder", "20", "--step-marker", "^step$", "--activities", "nvtx", "--no-table"]


def check_watchdog(profsh, hang, d):
    out = os.path.join(d, "hang.profsh")
    # 60 steps of about 7 ms; step 30's collective blocks for 4 s; the watchdog's period is 1 s.
    start = time.time()
    r = subprocess.run([profsh, "run", *FLIGHT, "--watchdog", "1", "-o", out, "--",
                        hang, "hang", "60", "5", "30", "4000"], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "the hung workload ran on to its end under --watchdog (%d: %s)" %
          (r.returncode, r.stderr[-300:]))
    hang_begin = [int(l.split()[1]) for l in r.stdout.splitlines() if l.startswith("hang_begin ")]
    check(len(hang_begin) == 1, "the workload's hang began once")
    dumps = [p for p in saved_paths(r.stdout)]
    watchdog = [p for p in dumps if "watchdog" in dump_info(profsh, p).get("reason", "")]
    check(len(watchdog) == 1, "one watchdog dump for one hang (saved: %s)" % dumps)
    if not watchdog or not hang_begin:
        print(r.stdout, r.stderr)
        return
    path = watchdog[0]
    # Saved within the period (1 s) of the last step, give or take the drain and poll rounds.
    saved_after = os.stat(path).st_mtime_ns - hang_begin[0]
    check(saved_after < 2.0e9, "the watchdog dumped %.2f s after the hang began (period 1 s)" % (saved_after / 1e9))
    info = dump_info(profsh, path)
    check(info["ok"], "the watchdog's dump reads (%s)" % info["stderr"][-200:])
    opened = [o for o in info["open"]]
    names = [o[3] for o in opened]
    check("nccl:all_reduce" in names, "the dump names the blocked collective range: %s" % names)
    # The main thread: innermost first.
    main = [o[3] for o in opened if o[3] in ("wait_collective", "step")]
    check(main == ["wait_collective", "step"], "the main thread's open ranges, innermost first: %s" % main)
    blocked = [c for c in info["collective"] if c[3] == "true" and c[4] == "true"]
    check(len(blocked) == 1 and blocked[0][1] == "nccl:all_reduce" and blocked[0][2] == "30",
          "the last collective entered is open, with its sequence number 30: %s" % info["collective"])
    done = [c for c in info["collective"] if c[4] == "false"]
    check(len(done) > 0 and done[-1][2] == "29", "the collectives before it are done: %s" % done[-1:])
    check("nccl:all_reduce" in info.get("names", "").split(","), "the blocked range is an event of the dump")
    check("watchdog" in r.stderr and "nccl:all_reduce" in r.stderr,
          "profsh's report on stderr names the hang: %s" % r.stderr[-400:])


def check_watchdog_samples(profsh, hang, d):
    out = os.path.join(d, "spin.profsh")
    # The blocked collective spins (as NCCL's threads do): with cpu on, its stacks are dumped.
    flight = [a if a != "nvtx" else "nvtx,cpu" for a in FLIGHT]
    r = subprocess.run([profsh, "run", *flight, "--watchdog", "1", "-o", out, "--",
                        hang, "hang", "40", "5", "20", "3000", "1"], capture_output=True, text=True, timeout=120)
    dumps = [p for p in saved_paths(r.stdout) if "watchdog" in dump_info(profsh, p).get("reason", "")]
    check(r.returncode == 0 and len(dumps) == 1, "a spinning hang under --activities nvtx,cpu is dumped (%d: %s)"
          % (r.returncode, r.stderr[-300:]))
    if not dumps:
        return
    samples = dump_info(profsh, dumps[0])["sample"]
    blocked = [x for x in samples if "BlockedInCollective" in x[2]]
    per_thread = {}
    for x in samples:
        per_thread[x[1]] = per_thread.get(x[1], 0) + 1
    check(len(blocked) >= 1, "the dump holds stack samples of the thread spinning in the collective: %s"
          % [x[2][-120:] for x in samples])
    check(samples and max(per_thread.values()) <= 3, "a few samples per thread (at most 3): %s" % per_thread)


def check_watchdog_kill(profsh, hang, d):
    out = os.path.join(d, "kill.profsh")
    start = time.time()
    r = subprocess.run([profsh, "run", *FLIGHT, "--watchdog", "1", "--watchdog-kill", "-o", out, "--",
                        hang, "hang", "60", "5", "20", "60000"], capture_output=True, text=True, timeout=120)
    elapsed = time.time() - start
    check(elapsed < 20, "--watchdog-kill ended a 60 s hang after %.1f s" % elapsed)
    check(r.returncode == 128 + signal.SIGKILL, "the killed workload's status is 137 (%d)" % r.returncode)
    dumps = [p for p in saved_paths(r.stdout) if "watchdog" in dump_info(profsh, p).get("reason", "")]
    check(len(dumps) == 1, "the hang was dumped before the kill: %s" % saved_paths(r.stdout))


def check_on_demand(profsh, hang, d):
    out = os.path.join(d, "demand.profsh")
    run = subprocess.Popen([profsh, "run", *FLIGHT, "-o", out, "--", hang, "two", "600", "10"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pids = None
    line = run.stdout.readline()
    if line.startswith("pids "):
        pids = [int(x) for x in line.split()[1:]]
    check(pids is not None, "the two-process workload started: %r" % line)
    if pids is None:
        run.kill()
        return
    time.sleep(1.5)  # some steps in the rings
    r = subprocess.run([profsh, "trace", "--pid", str(pids[1]), "--dump", "--timeout", "60"],
                       capture_output=True, text=True, timeout=120)
    paths = [l for l in r.stdout.splitlines() if l.endswith(".profsh")]
    check(r.returncode == 0 and len(paths) == 2,
          "profsh trace --pid CHILD --dump saves a dump of each process: %s %s" % (paths, r.stderr[-300:]))
    infos = [dump_info(profsh, p) for p in paths]
    check(sorted(int(i.get("pid", 0)) for i in infos) == sorted(pids), "the dumps are of both processes")
    spans = [i.get("span") for i in infos]
    check(len(spans) == 2 and spans[0] is not None and spans[0] == spans[1],
          "both processes dumped the same time span: %s" % spans)
    names = [i.get("names", "") for i in infos]
    check(any("child_work" in n for n in names) and any("parent_work" in n for n in names),
          "each dump holds its own process's steps")
    # A request for steps would replace the schedule that records every step: refused.
    r = subprocess.run([profsh, "trace", "--pid", str(pids[0]), "--steps", "2", "--timeout", "30"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 1 and "flight recorder" in r.stderr and "--dump" in r.stderr,
          "profsh trace --steps to a flight recorder's run is refused, naming --dump: %s" % r.stderr.strip())
    # SIGUSR2 to profsh: another dump of both.
    os.kill(run.pid, signal.SIGUSR2)
    time.sleep(1.5)
    # SIGKILL of the workload: the dumps made so far survive whole.
    digests = {p: hashlib.sha256(open(p, "rb").read()).hexdigest() for p in paths}
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    stdout, stderr = run.communicate(timeout=120)
    usr2 = [l for l in stdout.splitlines() if "SIGUSR2" in l]
    check(len(usr2) == 2, "SIGUSR2 to profsh dumps both processes: %s" % usr2)
    for p, digest in digests.items():
        check(os.path.exists(p) and hashlib.sha256(open(p, "rb").read()).hexdigest() == digest,
              "a dump made before the workload's SIGKILL is still whole: %s" % os.path.basename(p))
        check(dump_info(profsh, p)["ok"], "and it reads")
    leftovers = [f for f in os.listdir(d) if ".tmp" in f or f.startswith(".")]
    check(not leftovers, "no partial file is left beside the dumps: %s" % leftovers)


def check_dump_without_flight(profsh, hang, d):
    run = subprocess.Popen([profsh, "run", "--on-demand", "--step-marker", "^step$", "--activities", "nvtx",
                            "--no-table", "--", hang, "two", "300", "10"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=d)
    line = run.stdout.readline()
    pid = int(line.split()[1]) if line.startswith("pids ") else 0
    r = subprocess.run([profsh, "trace", "--pid", str(pid), "--dump", "--timeout", "30"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 1 and "no flight recorder" in r.stderr,
          "--dump to an --on-demand run says it has no flight recorder: %s" % r.stderr.strip())
    run.terminate()
    run.communicate(timeout=60)


def check_trigger_span(profsh, hang, d):
    out = os.path.join(d, "trigger.profsh")
    # The child's step 60 spends 30 ms in slow_work: its trigger fires there, in the child only.
    r = subprocess.run([profsh, "run", *FLIGHT, "--trigger", "range:slow_work>10", "-o", out, "--",
                        hang, "two", "120", "10", "60"], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "the two-process run with a trigger ended well (%d: %s)" % (r.returncode, r.stderr[-300:]))
    pids = [int(x) for l in r.stdout.splitlines() if l.startswith("pids ") for x in l.split()[1:]]
    infos = [dump_info(profsh, p) for p in saved_paths(r.stdout)]
    own = [i for i in infos if "(in pid" not in i.get("reason", "")]
    other = [i for i in infos if "(in pid" in i.get("reason", "")]
    check(len(pids) == 2 and len(own) == 1 and int(own[0].get("pid", 0)) == pids[1],
          "the trigger fired in the child alone: %s" % [(i.get("pid"), i.get("reason")) for i in infos])
    check(len(other) == 1 and len(pids) == 2 and int(other[0].get("pid", 0)) == pids[0]
          and "(in pid %d)" % pids[1] in other[0].get("reason", ""),
          "the parent dumped too, saying where the trigger fired: %s" % [i.get("reason") for i in other])
    if own and other:
        check(own[0].get("span") is not None and own[0].get("span") == other[0].get("span"),
              "the parent dumped the child's span: %s %s" % (own[0].get("span"), other[0].get("span")))
        check("parent_work" in other[0].get("names", ""), "the parent's dump holds its own steps")


LUA_WATCHDOG = r"""
local hang, kill = arg[1], arg[2] == "kill"
local dumps = {}
local p = profsh.profile{
  activities = {"nvtx"}, step_marker = "^step$",
  flight_recorder = {steps = 20},
  watchdog = {seconds = 1, kill = kill},
  on_trace_ready = function(t)
    local m = t.metadata.profsh
    local open = {}
    if m.hang then
      for _, pr in ipairs(m.hang.processes) do
        for _, r in ipairs(pr.open) do open[#open + 1] = r.name end
      end
    end
    dumps[#dumps + 1] = m.reason .. "|" .. table.concat(open, ",")
  end}
local start = os.time()
local status = p:run{hang, "hang", "60", "5", "30", kill and "60000" or "4000"}
print("status", status, "hangs", p.flight_recorder.hangs, "seconds", os.time() - start)
for _, d in ipairs(dumps) do print("dump", d) end
"""

LUA_WATCHDOG_BAD = [
    ('profsh.profile{watchdog = 1}', "a watchdog needs flight_recorder"),
    ('profsh.profile{flight_recorder = {steps = 5}, watchdog = 0}', "seconds above 0"),
    ('profsh.profile{flight_recorder = {steps = 5}, watchdog = "1"}', "seconds or {seconds = S, kill = false}"),
    ('profsh.profile{flight_recorder = {steps = 5}, watchdog = {secs = 1}}', "secs"),
]


def check_lua_watchdog(profsh, hang, d):
    # profsh.profile{flight_recorder =, watchdog = {seconds =, kill =}}: the hang is handed to
    # on_trace_ready with the blocked range, the workload runs on (or is killed with kill = true).
    script = os.path.join(d, "watchdog.lua")
    with open(script, "w") as f:
        f.write(LUA_WATCHDOG)
    for kill in (False, True):
        r = subprocess.run([profsh, script, hang, "kill" if kill else "keep"], capture_output=True, text=True,
                           timeout=120)
        lines = r.stdout.splitlines()
        status = [l.split("\t") for l in lines if l.startswith("status\t")]
        dumps = [l.split("\t", 1)[1] for l in lines if l.startswith("dump\t")]
        hung = [x for x in dumps if x.startswith("watchdog")]
        want_status = str(128 + signal.SIGKILL) if kill else "0"
        check(r.returncode == 0 and len(status) == 1 and status[0][1] == want_status and status[0][3] == "1",
              "Lua watchdog (kill = %s): the run ends with status %s, one hang counted: %s %s"
              % (kill, want_status, status, r.stderr[-300:]))
        check(len(hung) == 1 and "nccl:all_reduce" in hung[0].split("|")[1].split(","),
              "Lua watchdog (kill = %s): on_trace_ready gets the hang's dump naming the blocked range: %s"
              % (kill, dumps))
        if kill:
            check(int(status[0][5]) < 20 if status else False,
                  "Lua watchdog kill = true ended a 60 s hang early: %s" % status)
    for chunk, want in LUA_WATCHDOG_BAD:
        r = subprocess.run([profsh, "-e", chunk], capture_output=True, text=True, timeout=60)
        check(r.returncode != 0 and want in r.stderr, "%s is refused: %r" % (chunk, r.stderr.strip()[-160:]))


def main():
    profsh, hang = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as d:
        check_watchdog(profsh, hang, d)
    with tempfile.TemporaryDirectory() as d:
        check_watchdog_samples(profsh, hang, d)
    with tempfile.TemporaryDirectory() as d:
        check_watchdog_kill(profsh, hang, d)
    with tempfile.TemporaryDirectory() as d:
        check_on_demand(profsh, hang, d)
    with tempfile.TemporaryDirectory() as d:
        check_trigger_span(profsh, hang, d)
    with tempfile.TemporaryDirectory() as d:
        check_dump_without_flight(profsh, hang, d)
    with tempfile.TemporaryDirectory() as d:
        check_lua_watchdog(profsh, hang, d)
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
