#!/usr/bin/env python3
"""The flight recorder end to end (profsh run --flight-recorder, profsh.profile{flight_recorder=}):
a trigger at a known step saves exactly the steps around it with its reason, the slow-step and
memory-growth triggers fire where the workload misbehaves, a trigger that errors is reported once
and the run completes, and 10,000 steps keep the host's ring as small as 200 do.

Usage: check_flight.py PROFSH FLIGHT_WORKLOAD
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def run(profsh, args, workload, timeout=300):
    return subprocess.run([profsh, "run", "--activities", "nvtx", "--no-table", *args, "--", *workload],
                          capture_output=True, text=True, timeout=timeout)


DUMP = re.compile(r"^== flight recorder dump (\d+) of pid (\d+) \(steps (-?\d+)-(-?\d+)\): (.*)$")


def dumps_of(out):
    """[(index, pid, first, last, reason, path)] from profsh run's output."""
    lines = out.splitlines()
    found = []
    for i, line in enumerate(lines):
        m = DUMP.match(line)
        if m:
            saved = lines[i + 1] if i + 1 < len(lines) else ""
            path = saved[len("saved "):] if saved.startswith("saved ") else None
            found.append((int(m[1]), int(m[2]), int(m[3]), int(m[4]), m[5], path))
    return found


READ_DUMP = r"""
local t = profsh.load(arg[1])
local meta = t.metadata.profsh
local work = 0
for _, a in ipairs(t:key_averages()) do if a.key == "work" then work = a.count end end
print(t.steps[1], t.steps[2], work, meta.reason)
"""


def read_dump(profsh, path):
    r = subprocess.run([profsh, "-e", READ_DUMP, "--", path], capture_output=True, text=True, timeout=120)
    return r.stdout.strip().split("\t") if r.returncode == 0 else ["error: " + r.stderr]


STATS = re.compile(r"flight recorder: (\d+) steps? seen.*, (\d+) steps? kept at the end \((\d+) bytes; at most "
                   r"(\d+) steps and (\d+) bytes at once\), (\d+) triggers? fired, (\d+) dumps? saved")


def stats_of(err):
    m = STATS.search(err)
    return tuple(int(x) for x in m.groups()) if m else None


def check_step_37(profsh, workload, tmp):
    out = os.path.join(tmp, "known.profsh")
    r = run(profsh, ["--flight-recorder", "20", "-o", out, "--trigger", 'step.step == 37 and "the 37th step"'],
            [workload, "slow", "200", "37", "2"])
    dumps = dumps_of(r.stdout)
    check(r.returncode == 0, "a flight recording completes (%s)" % r.stderr[-400:])
    check(len(dumps) == 1, "one trigger, one dump (%s)" % dumps)
    if not dumps:
        return
    index, pid, first, last, reason, path = dumps[0]
    check((first, last) == (32, 39), "the dump holds steps 37-5..37+2: %d-%d" % (first, last))
    check(reason == "the 37th step", "the trigger's string is the dump's reason: %r" % reason)
    check(path == os.path.join(tmp, "known.%d.0.profsh" % pid), "saved as BASE.PID.N.profsh: %s" % path)
    got = read_dump(profsh, path) if path else []
    check(got == ["32", "39", "8", "the 37th step"],
          "the saved trace holds steps 32-39, their 8 'work' ranges and the reason: %s" % got)
    left = sorted(os.path.basename(p) for p in glob.glob(os.path.join(tmp, "known*")))
    check(left == [os.path.basename(path)], "nothing else is saved: %s" % left)


def check_slow_step(profsh, workload, tmp):
    out = os.path.join(tmp, "slow.profsh")
    r = run(profsh, ["--flight-recorder", "20", "-o", out, "--trigger", "slow-step:2.2"],
            [workload, "slow", "200", "37", "20"])
    dumps = dumps_of(r.stdout)
    check(r.returncode == 0, "slow-step: the run completes (%s)" % r.stderr[-400:])
    check([(d[2], d[3]) for d in dumps] == [(32, 39)],
          "slow-step:2.2 over 200 steps of 20 ms, step 37 of 60 ms: steps 32-39 saved (%s)" % dumps)
    if dumps:
        check(dumps[0][4].startswith("slow-step: step 37 took "), "the reason names the step: %r" % dumps[0][4])
        got = read_dump(profsh, dumps[0][5])
        check(got[:2] == ["32", "39"] and got[3:] == [dumps[0][4]], "the saved trace carries the reason: %s" % got)


def check_memory_growth(profsh, workload, tmp):
    out = os.path.join(tmp, "leak.profsh")
    r = run(profsh, ["--profile-memory", "--flight-recorder", "20", "-o", out, "--trigger", "memory-growth"],
            [workload, "leak", "80", "50", "5", str(16 << 20)])
    dumps = dumps_of(r.stdout)
    check(r.returncode == 0, "memory-growth: the run completes (%s)" % r.stderr[-400:])
    check(len(dumps) >= 1, "a leak from step 50 fires memory-growth (%s)" % dumps)
    if dumps:
        step = int(re.search(r"after step (\d+)", dumps[0][4])[1]) if "after step" in dumps[0][4] else -1
        check(50 <= step <= 54, "it fires within 5 steps of the leak's start: step %d (%s)" % (step, dumps[0][4]))
        check(dumps[0][2] == step - 5 and dumps[0][3] == step + 2, "the dump is %d-%d: %s" % (step - 5, step + 2, dumps[0][:4]))


def check_trigger_error(profsh, workload, tmp):
    out = os.path.join(tmp, "error.profsh")
    r = run(profsh, ["--flight-recorder", "10", "-o", out, "--trigger", "step.no_such_field.x > 1",
                     "--trigger", 'step.step == 5 and "still judged"'],
            [workload, "slow", "30", "99", "1"])
    failed = [l for l in r.stderr.splitlines() if "failed at step" in l]
    check(r.returncode == 0, "a trigger that errors: the run completes (%s)" % r.stderr[-400:])
    check(len(failed) == 1 and "step.no_such_field.x > 1" in failed[0] and "disabled" in failed[0],
          "the error is reported once, naming the trigger: %s" % failed)
    check([d[4] for d in dumps_of(r.stdout)] == ["still judged"], "the other trigger goes on: %s" % dumps_of(r.stdout))
    s = stats_of(r.stderr)
    check(s is not None and s[0] == 30, "every step was still recorded: %s" % (s,))


def check_flat(profsh, workload, tmp):
    short = stats_of(run(profsh, ["--flight-recorder", "20", "-o", os.path.join(tmp, "short.profsh")],
                         [workload, "steps", "200", "200"]).stderr)
    r = run(profsh, ["--flight-recorder", "20", "-o", os.path.join(tmp, "long.profsh")],
            [workload, "steps", "10000", "200"], timeout=900)
    long = stats_of(r.stderr)
    check(short is not None and long is not None, "both runs report the ring (%s)" % r.stderr[-300:])
    if short is None or long is None:
        return
    check(long[0] == 10000, "10,000 steps seen: %d" % long[0])
    check(long[1] == 20 and long[3] <= 21, "at most 20 steps kept (+ the one arriving): %s" % (long,))
    check(long[4] <= 1.5 * short[4] + 65536,
          "the ring's peak bytes over 10,000 steps (%d) stay those of 200 (%d)" % (long[4], short[4]))
    check(not glob.glob(os.path.join(tmp, "long.*")), "no trigger, nothing saved")


LUA_PROFILE = r"""
local workload = arg[1]
local seen, dumps = 0, {}
local p = profsh.profile{
  activities = {"nvtx"},
  flight_recorder = {steps = 12, before = 2, after = 1},
  trigger = function(step, history)
    seen = seen + 1
    if step.step == 20 then
      assert(history.count == 20 and history.median > 0 and history.p95 >= history.median)
      assert(step.ranges.work > 0 and step.top_ranges[1].name == "work")
      return "twenty"
    end
    return false
  end,
  on_trace_ready = function(t)
    dumps[#dumps + 1] = string.format("%d-%d %s", t.steps[1], t.steps[2], t.metadata.profsh.reason)
  end}
local status = p:run{workload, "slow", "40", "99", "1"}
print("status", status, "seen", seen)
for _, d in ipairs(dumps) do print(d) end
"""


def check_lua(profsh, workload, tmp):
    path = os.path.join(tmp, "profile.lua")
    with open(path, "w") as f:
        f.write(LUA_PROFILE)
    r = subprocess.run([profsh, path, workload], capture_output=True, text=True, timeout=300)
    lines = r.stdout.splitlines()
    check(r.returncode == 0 and lines[:1] == ["status\t0\tseen\t40"],
          "profsh.profile{flight_recorder=, trigger=}: the trigger sees all 40 steps (%s%s)" % (lines[:1], r.stderr[-300:]))
    check(lines[1:] == ["18-21 twenty"], "on_trace_ready gets steps 18-21 with the reason: %s" % lines[1:])


def main():
    profsh, workload = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        for test in (check_step_37, check_slow_step, check_memory_growth, check_trigger_error, check_lua, check_flat):
            if len(sys.argv) > 3 and test.__name__ not in sys.argv[3:]:
                continue
            test(profsh, workload, tmp)
    if failures:
        print("%d failed" % len(failures))
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
