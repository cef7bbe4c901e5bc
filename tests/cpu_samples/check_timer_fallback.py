#!/usr/bin/env python3
"""The collector's timer fallback (perf_event_open denied) on the cases that broke it: a thread
with the signal blocked, an exec that fails then one that succeeds, a workload that replaces the
real-time signals' handlers, and thousands of short threads. The workload is timer_cases.c.

Usage: check_timer_fallback.py PROFSH WORKLOAD_DIR
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


DUMP = r"""
local t = profsh.load(arg[1])
for _, r in ipairs(t:samples{}) do  -- empty for a run that sampled nothing
  print("S", r.tid, r["function"], r.stack, r.weight)
end
"""


def run(profsh, workdir, mode):
    out = os.path.join(tmp, mode + ".profsh")
    env = dict(os.environ, PROFSH_SAMPLE_DENY_PERF="1")
    r = subprocess.run([profsh, "run", "--activities", "cpu", "--sample-rate", "999", "--no-table",
                        "-o", out, "--", os.path.join(workdir, "timer_cases"), mode],
                       capture_output=True, text=True, timeout=120, env=env)
    check(r.returncode == 0, "%s: profsh run exits 0 (%s)" % (mode, r.stderr.strip()[-300:]))
    summary = " ".join(l for l in r.stderr.splitlines() if "CPU sample" in l)
    script = os.path.join(tmp, "dump.lua")
    with open(script, "w") as f:
        f.write(DUMP)
    d = subprocess.run([profsh, script, out], capture_output=True, text=True, timeout=120)
    check(d.returncode == 0, "%s: the samples load (%s)" % (mode, d.stderr.strip()[-300:]))
    samples = []  # (tid, leaf, stack, weight)
    for line in d.stdout.splitlines():
        f = line.split("\t")
        if f[0] == "S":
            samples.append((f[1], f[2], f[3], int(f[4])))
    return r.stdout, summary, samples


def weight_of(samples, function):
    """The periods of the samples taken in `function` or what it calls (clock_gettime)."""
    return sum(s[3] for s in samples if function in s[2].split(";"))


def unsignalled(summary):
    """The periods the summary says threads ran after their timer's last signal. On a loaded
    machine a CPU-time timer's signals come tens of milliseconds apart, so a burn that ends a
    thread or an image may end before its next signal."""
    m = re.search(r"(\d+) sample periods not sampled: threads ran them after", summary)
    return int(m.group(1)) if m else 0


def main():
    global tmp
    profsh, workdir = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="timer-fallback-")
    try:
        # 400 ms burnt with the signal blocked, then 300 ms not: the signal delivered when
        # pthread_sigmask unblocks it stands for at most 11 periods at 999 Hz (a 100 Hz tick's
        # merge), never for the blocked stretch.
        _, summary, samples = run(profsh, workdir, "blocked")
        # (A sample inside unblocked_burn may stand for more on a loaded machine: late ticks.)
        heaviest = max((s[3] for s in samples if "unblocked_burn" not in s[2].split(";")),
                       default=0)
        check(heaviest <= 11, "blocked: the unblocking call's sample stands for at most 11 "
              "periods (%d)" % heaviest)
        unblocked = weight_of(samples, "unblocked_burn")
        total = sum(s[3] for s in samples)
        check(unblocked >= 20 and 200 <= unblocked + unsignalled(summary) <= 360,
              "blocked: unblocked_burn has ~300 periods (%d, and %d run after the last signal)"
              % (unblocked, unsignalled(summary)))
        check(total - unblocked <= 20,
              "blocked: the blocked stretch is not booked elsewhere (%d of %d periods)" %
              (total - unblocked, total))
        check("not sampled: the thread had the signal blocked" in summary,
              "blocked: the summary counts the periods not sampled (%s)" % summary)
        # An exec keeps the pid: each image has its own samples file, and an exec that fails
        # goes on sampling. (Each burn ends at an exec or the exit, where the periods run after
        # the last signal go unsampled: on a loaded machine that can be most of one; the summary
        # shows one image's note only, so each is checked to be sampled, and ~200 unloaded.)
        _, summary, samples = run(profsh, workdir, "exec")
        weights = [weight_of(samples, leaf) for leaf in ("first_burn", "after_failed_exec", "second_burn")]
        check(all(20 <= w <= 260 for w in weights) and sum(weights) >= 360,
              "exec: first_burn, after_failed_exec and second_burn have ~200 periods each (%s)" % weights)
        # The program takes every real-time signal for itself: the collector notices within its
        # writer's 10 ms round, stops its timers and says so; the program's handler is left alone.
        out, summary, samples = run(profsh, workdir, "handler")
        calls = [int(l.split(":")[1]) for l in out.splitlines() if l.startswith("handler calls:")]
        check(calls and calls[0] <= 60,
              "handler: the program's handler gets few of our signals (%s of ~300)" % calls)
        check("installed its own handler" in summary,
              "handler: the summary says why sampling stopped (%s)" % summary)
        # 3000 short threads, half ending in pthread_exit: their slots and timers are freed, so
        # the thread after them is sampled and only the main thread's timer is left (the
        # collector's drain thread has none).
        out, summary, samples = run(profsh, workdir, "threads")
        late = weight_of(samples, "late_burn")
        check(late >= 20 and 150 <= late + unsignalled(summary) <= 260,
              "threads: the 3001st thread is sampled (%d periods, and %d run after the last "
              "signals)" % (late, unsignalled(summary)))
        timers = [int(l.split(":")[1]) for l in out.splitlines() if l.startswith("timers:")]
        check(timers in ([1], [-1]), "threads: one POSIX timer left, the main thread's (%s)" % timers)
        check("threads not sampled" not in summary,
              "threads: no thread went without a slot (%s)" % summary)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
