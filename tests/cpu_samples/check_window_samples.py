#!/usr/bin/env python3
"""The cpu activity in live windows: cpu_steps (steps that burn a known split of CPU time, and
steps or stretches that burn in another function) runs under a schedule, a capture range and an
on-demand request, with perf_event_open and with the collector's timer fallback. Each window must
hold the samples of its span only (times inside it, none of the burning done outside the
windows), split as the workload burned (within 5 points), attributed to its ranges, with the
"sampling" metadata; a window around an idle stretch has none of the workload's; the summary
counts the samples left out.

Usage: check_window_samples.py PROFSH CPU_STEPS
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


DUMP = r"""
local t = profsh.load(arg[1])
local m = t.metadata.profsh or {}
print("T", string.format("%.3f", t.start), m.sampling or "")
for _, r in ipairs(t:samples{}) do
  print("S", string.format("%.3f", r.ts), r["function"], r.ranges, r.weight)
end
"""

BURNING = ("part_a_chunk", "part_b_chunk", "wait_chunk")
SLACK_NS = 1000000  # the workload's clock against the windows' (conversions, not scheduling)


def load(profsh, path):
    """[(abs_ns, function, ranges, weight)], sampling text."""
    d = subprocess.run([profsh, dump_script, path], capture_output=True, text=True, timeout=60)
    check(d.returncode == 0, "%s loads (%s)" % (os.path.basename(path), d.stderr.strip()[-300:]))
    start_us, sampling, samples = 0.0, "", []
    for line in d.stdout.splitlines():
        f = line.split("\t")
        if f[0] == "T":
            start_us, sampling = float(f[1]), f[2]
        elif f[0] == "S":
            samples.append((int((start_us + float(f[1])) * 1000), f[2], f[3], int(f[4])))
    return samples, sampling


def check_window(label, samples, sampling, method, lo_ns, hi_ns, busy_ms):
    check(method in sampling, "%s: the window's metadata says how it sampled (%s)" % (label, sampling))
    outside = [s for s in samples if not lo_ns - SLACK_NS <= s[0] <= hi_ns + SLACK_NS]
    check(not outside, "%s: every sample lies in the window's span (%d outside, e.g. %s ms off)" %
          (label, len(outside), ["%.1f" % ((s[0] - (lo_ns if s[0] < lo_ns else hi_ns)) / 1e6)
                                 for s in outside[:3]]))
    weight = {name: sum(s[3] for s in samples if s[1] == name) for name in BURNING}
    check(weight["wait_chunk"] == 0,
          "%s: none of the CPU time burned outside the windows (%d periods in wait_chunk)" %
          (label, weight["wait_chunk"]))
    busy = weight["part_a_chunk"] + weight["part_b_chunk"]
    if busy_ms == 0:
        check(busy == 0 and sum(s[3] for s in samples) <= 5,
              "%s: an idle window has no samples of the workload (%d periods, %d in all)" %
              (label, busy, sum(s[3] for s in samples)))
        return
    check(0.75 * busy_ms <= busy <= 1.2 * busy_ms,
          "%s: %d ms of CPU time at 999 Hz give about as many periods (%d)" % (label, busy_ms, busy))
    share = weight["part_a_chunk"] / busy if busy else 0
    check(abs(share - 0.6) <= 0.05,
          "%s: part_a has %.1f%% of the samples (expected 60%% +- 5)" % (label, 100 * share))
    for name, rng in (("part_a_chunk", "part_a"), ("part_b_chunk", "part_b")):
        mine = [s for s in samples if s[1] == name]
        attributed = sum(1 for s in mine if rng in s[2].split(";"))
        check(mine and attributed >= 0.95 * len(mine),
              "%s: %s's samples carry its NVTX range %s (%d of %d)" % (label, name, rng, attributed,
                                                                       len(mine)))


def times(stdout, kind):
    return [[int(x) for x in line.split()[1:]] for line in stdout.splitlines()
            if line.startswith(kind + " ")]


def check_schedule(profsh, cpu_steps, env, method, label, ms):
    out = os.path.join(tmp, "sched-%s.profsh" % label)
    # Steps 2-3 and 6-7 recorded; steps 0, 4 and 8 burn in wait_chunk (1 and 5: warmup).
    r = subprocess.run([profsh, "run", "--activities", "nvtx,cpu", "--schedule",
                        "wait=1,warmup=1,active=2,repeat=2", "--step-marker", "^step$", "--no-table",
                        "-o", out, "--", cpu_steps, "steps", str(ms), "wwaawwaaw"],
                       capture_output=True, text=True, timeout=120, env=env)
    check(r.returncode == 0, "%s schedule: profsh run exits 0 (%s)" % (label, r.stderr.strip()[-300:]))
    left = re.search(r"\((\d+) more outside the windows, left out\)", r.stderr)
    check(left and int(left.group(1)) > 0,
          "%s schedule: the summary counts the samples outside the windows (%s)" %
          (label, left.group(0) if left else r.stderr.strip()[-200:]))
    starts = {s[0]: s[1] for s in times(r.stdout, "step")}
    windows = sorted(glob.glob(out[:-len(".profsh")] + ".*.profsh"))
    check(len(windows) == 2, "%s schedule: two windows saved (%d)" % (label, len(windows)))
    for path, (first, after) in zip(windows, ((2, 4), (6, 8))):
        samples, sampling = load(profsh, path)
        check_window("%s schedule steps %d-%d" % (label, first, after - 1), samples, sampling,
                     method, starts.get(first, 0), starts.get(after, 0), 2 * ms)


def check_capture(profsh, cpu_steps, env, method, label, ms):
    out = os.path.join(tmp, "capture-%s.profsh" % label)
    r = subprocess.run([profsh, "run", "--activities", "nvtx,cpu", "--capture-range", "capture",
                        "--no-table", "-o", out, "--", cpu_steps, "capture", str(ms)],
                       capture_output=True, text=True, timeout=120, env=env)
    check(r.returncode == 0, "%s capture: profsh run exits 0 (%s)" % (label, r.stderr.strip()[-300:]))
    spans = times(r.stdout, "capture")
    windows = sorted(glob.glob(out[:-len(".profsh")] + ".*.profsh"))
    check(len(windows) == 2 and len(spans) == 2,
          "%s capture: two capture ranges, two windows (%d)" % (label, len(windows)))
    for path, (lo, hi), busy in zip(windows, spans, (ms, 0)):
        samples, sampling = load(profsh, path)
        check_window("%s capture %s" % (label, "busy" if busy else "idle"), samples, sampling,
                     method, lo, hi, busy)


def workload_of(proc):
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


def check_on_demand(profsh, cpu_steps, env, method, label, ms):
    run = subprocess.Popen([profsh, "run", "--activities", "nvtx,cpu", "--on-demand", "--step-marker",
                            "^step$", "--no-table", "--", cpu_steps, "steps", str(ms), "a" * 20],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp, env=env)
    pid = workload_of(run)
    check(pid is not None, "%s on demand: the workload started" % label)
    if pid is None:
        run.kill()
        run.communicate()
        return
    time.sleep(0.5)
    out = os.path.join(tmp, "demand-%s.profsh" % label)
    r = subprocess.run([profsh, "trace", "--pid", str(pid), "--steps", "3", "-o", out, "--timeout", "60"],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0 and os.path.exists(out),
          "%s on demand: profsh trace saves the request's window (%s)" % (label, r.stderr.strip()[-200:]))
    stdout, stderr = run.communicate(timeout=120)
    check(run.returncode == 0, "%s on demand: profsh run exits 0 (%s)" % (label, stderr.strip()[-300:]))
    if not os.path.exists(out):
        return
    steps = subprocess.run([profsh, "-e", "local t = profsh.load(arg[1]) print(t.steps[1], t.steps[2])",
                            "--", out], capture_output=True, text=True, timeout=60).stdout.split()
    starts = {s[0]: s[1] for s in times(stdout, "step")}
    check(len(steps) == 2, "%s on demand: the window has its steps (%s)" % (label, steps))
    if len(steps) != 2:
        return
    first, last = int(steps[0]), int(steps[1])
    samples, sampling = load(profsh, out)
    hi = starts.get(last + 1, times(stdout, "end")[0][0] if times(stdout, "end") else 0)
    check_window("%s on demand steps %d-%d" % (label, first, last), samples, sampling, method,
                 starts.get(first, 0), hi, (last - first + 1) * ms)


def main():
    global tmp, dump_script
    profsh, cpu_steps = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    tmp = tempfile.mkdtemp(prefix="cpu-windows-")
    try:
        dump_script = os.path.join(tmp, "dump.lua")
        with open(dump_script, "w") as f:
            f.write(DUMP)
        # ms: CPU time of a step, a capture range, an idle stretch. The timer fallback's signal
        # comes on a tick that finds the thread running: on a loaded machine one stands for tens
        # of periods, so its windows are longer for the split to be within 5 points.
        for label, extra, method, ms in (("perf", {}, "perf_event_open", 100),
                                         ("timer", {"PROFSH_SAMPLE_DENY_PERF": "1"}, "timer", 300)):
            env = dict(os.environ, **extra)
            check_schedule(profsh, cpu_steps, env, method, label, ms)
            check_capture(profsh, cpu_steps, env, method, label, ms)
            check_on_demand(profsh, cpu_steps, env, method, label, ms // 2)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
