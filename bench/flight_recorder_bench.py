"""The flight recorder's always-on cost, measured so that a shared 2-core machine's noise shows:

- resnet18 training on the CPU (Debian's torch 1.13, /usr/bin/python3; batch 8x3x64x64, SGD,
  STEPS timed steps after 5 warm-up ones, torch.set_num_threads(THREADS), 1 by default): bare,
  under `profsh run --flight-recorder 20 --step-marker optimizer`, under `profsh run` (the whole
  run recorded) and under torch.profiler active on every step (prof.step() each step). ROUNDS
  rounds; each round runs the four once, in an order rotated from round to round, so that drift
  on the machine hits all alike. Each run's figure is its median step; each round's ratio is a
  configuration's median step over the same round's bare one. Printed: per configuration the
  median of the rounds' ratios, their spread (min-max), the ratio of the medians, the median of
  the rounds' ratios of the fastest step (a step no other process interrupted); the CPU
  time per step of profsh's own threads (the workload's drain thread, and the host process, which
  decodes and summarises every step) beside the workload's; the load average before and after;
- the NVTX sample at full rate (bench/flight_nvtx: steps of 200 000 push/pop pairs): ns per pair
  bare, under profsh run and under --flight-recorder;
- profsh's own peak memory (VmHWM of the profsh process) and the ring's peak bytes (its summary
  line) during the resnet18 flight recording, beside the bound --flight-recorder-mb sets;
- the time from a dump request (profsh trace --pid PID --dump) to the saved traces.

  python3 bench/flight_recorder_bench.py BUILD_DIR [ROUNDS] [STEPS] [THREADS]
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

TRAIN = r'''
import os, sys, time, torch, torchvision
mode, steps, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch.set_num_threads(threads)
torch.manual_seed(0)
model = torchvision.models.resnet18(num_classes=10)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(8, 3, 64, 64)
y = torch.randint(0, 10, (8,))
def step():
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
times = []
cpu = []
def loop(after=None):
    for i in range(5 + steps):
        if i == 5:
            cpu.append(sum(os.times()[:2]))
        start = time.perf_counter()
        step()
        if after:
            after()
        if i >= 5:
            times.append(time.perf_counter() - start)
    cpu.append(sum(os.times()[:2]))
if mode == "torch":
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        loop(prof.step)
else:
    loop()
# The drain thread's CPU time (profsh's collector thread in this process), from its /proc entry.
drain = 0.0
for tid in os.listdir("/proc/self/task"):
    try:
        if open("/proc/self/task/%s/comm" % tid).read().strip() == "profsh-drain":
            fields = open("/proc/self/task/%s/stat" % tid).read().rsplit(")", 1)[1].split()
            drain += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        pass
times.sort()
print("median_step_s", times[len(times) // 2], "min_step_s", times[0])
print("process_cpu_s", sum(os.times()[:2]), "timed_cpu_s", cpu[1] - cpu[0], "drain_cpu_s", drain)
'''


def children_cpu():
    t = os.times()
    return t[2] + t[3]


def median_step(cmd, env=None):
    # The CPU time of cmd's process tree: the process and the children it waited for (profsh
    # waits for the workload), from this process's children's times.
    before = children_cpu()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out, err = p.communicate(timeout=1800)
    rc = p.returncode
    tree_cpu = children_cpu() - before
    m = re.search(r"median_step_s (\S+)", out)
    if rc != 0 or not m:
        sys.exit("flight_recorder_bench: %s failed:\n%s" % (" ".join(cmd), err[-2000:]))
    # A profsh run that recorded no operator measured nothing (a build folder without the torch
    # plugin's sources, a step marker that never matched).
    if cmd[0].endswith("profsh") and (" 0 ranges," in err or " 0 steps seen" in err):
        sys.exit("flight_recorder_bench: %s recorded nothing:\n%s" % (" ".join(cmd), err[-2000:]))
    c = re.search(r"process_cpu_s (\S+) timed_cpu_s (\S+) drain_cpu_s (\S+)", out)
    figures = {"step": float(m.group(1)), "tree_cpu": tree_cpu}
    fastest = re.search(r"min_step_s (\S+)", out)
    if fastest:
        figures["min_step"] = float(fastest.group(1))
    if c:
        figures.update(process_cpu=float(c.group(1)), timed_cpu=float(c.group(2)), drain_cpu=float(c.group(3)))
    return figures, err


def peak_rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def main():
    args = sys.argv[1:]
    build = os.path.abspath(args[0])
    rounds = int(args[1]) if len(args) > 1 else 5
    steps = int(args[2]) if len(args) > 2 else 30
    threads = int(args[3]) if len(args) > 3 else 1
    reps = rounds
    profsh = os.path.join(build, "profsh")
    nvtx = os.path.join(build, "bench", "flight_nvtx")
    python = "/usr/bin/python3"
    bound_mb = 256
    with tempfile.TemporaryDirectory() as work:
        script = os.path.join(work, "train.py")
        with open(script, "w") as f:
            f.write(TRAIN)
        out = os.path.join(work, "t.profsh")
        train = [python, script, "plain", str(steps), str(threads)]
        runs = {
            "no profiler": train,
            "profsh --flight-recorder 20": [profsh, "run", "--no-table", "--activities", "torch",
                                            "--flight-recorder", "20", "--flight-recorder-mb", str(bound_mb),
                                            "--step-marker", "optimizer", "-o", out, "--"] + train,
            "profsh run (whole run)": [profsh, "run", "--no-table", "--activities", "torch", "-o", out,
                                       "--"] + train,
            "torch.profiler every step": [python, script, "torch", str(steps), str(threads)],
        }
        names = list(runs)
        # One run first: builds and caches the operator source where needed (not timed).
        median_step(runs["profsh run (whole run)"])
        load_before = os.getloadavg()
        results = {k: [] for k in names}
        for r in range(rounds):
            order = names[r % len(names):] + names[:r % len(names)]  # rotated: no fixed position
            for name in order:
                results[name].append(median_step(runs[name])[0])
        load_after = os.getloadavg()
        print("resnet18 training, CPU, torch.set_num_threads(%d), batch 8x3x64x64: median step of %d timed "
              "steps per run; %d rounds, each running the four once in rotated order; load average %.1f "
              "before, %.1f after (%d cores)" % (threads, steps, rounds, load_before[0], load_after[0],
                                                  os.cpu_count()))
        bare = [f["step"] for f in results["no profiler"]]
        print("  %-28s %9s %9s %17s %9s %9s   %s" % ("", "median", "ratio", "rounds' ratios", "ratio of",
                                                      "fastest", "CPU per step (ms): workload / drain / host"))
        print("  %-28s %9s %9s %17s %9s %9s" % ("", "step ms", "(median)", "min-max", "medians", "step"))
        for name in names:
            steps_ms = [f["step"] for f in results[name]]
            ratios = [s_ / b for s_, b in zip(steps_ms, bare)]
            cpu = ""
            figs = results[name]
            if "timed_cpu" in figs[0]:
                workload = statistics.median(f["timed_cpu"] / steps for f in figs) * 1e3
                drain = statistics.median(f["drain_cpu"] / (steps + 5) for f in figs) * 1e3
                # profsh's process: the tree's CPU time beyond the workload's own, less what the same
                # difference is for the bare run of the round (the interpreter's start and exit).
                host = statistics.median(((f["tree_cpu"] - f["process_cpu"]) - (g["tree_cpu"] - g["process_cpu"]))
                                         / (steps + 5) for f, g in zip(figs, results["no profiler"])) * 1e3
                # Added CPU per step, round by round: the workload's (its drain thread's
                # included) and profsh's process beyond the bare run's; time-slicing on a loaded
                # machine stretches wall times, CPU times far less.
                added = statistics.median(
                    ((f["timed_cpu"] / steps + ((f["tree_cpu"] - f["process_cpu"]) - (g["tree_cpu"] - g["process_cpu"]))
                      / (steps + 5)) / (g["timed_cpu"] / steps) - 1) * 100
                    for f, g in zip(figs, results["no profiler"]))
                cpu = "%.1f / %.2f / %.2f  (added CPU %+.1f %%)" % (workload, drain, host, added)
            # The fastest step of each run (one no other process interrupted), over the same
            # round's bare one: the median of the rounds.
            fastest = statistics.median(f["min_step"] / g["min_step"]
                                        for f, g in zip(figs, results["no profiler"]))
            print("  %-28s %9.1f %9.4f %8.4f-%-8.4f %9.4f %9.4f   %s" % (
                name, statistics.median(steps_ms) * 1e3, statistics.median(ratios), min(ratios), max(ratios),
                statistics.median(steps_ms) / statistics.median(bare), fastest, cpu))

        # The ring's and profsh's memory during a flight recording.
        cmd = runs["profsh --flight-recorder 20"]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        hwm = 0
        while p.poll() is None:
            hwm = max(hwm, peak_rss_kb(p.pid) or 0)
            time.sleep(0.05)
        _, err = p.communicate()
        ring = re.search(r"at most (\d+) steps and (\d+) bytes at once", err)
        print("memory, --flight-recorder 20 --flight-recorder-mb %d: profsh's peak RSS %.1f MiB; the ring's "
              "peak %s (bound %d MiB)" % (bound_mb, hwm / 1024.0,
                                          "%s steps, %.2f MiB" % (ring.group(1), int(ring.group(2)) / 2**20)
                                          if ring else "(not reported)", bound_mb))

        # NVTX at full rate.
        pairs = "200000"
        nv = {"bare": [], "profsh run": [], "--flight-recorder 20": []}
        for _ in range(reps):
            nv["bare"].append(float(subprocess.run([nvtx, "30", pairs], capture_output=True, text=True).stdout))
            nv["profsh run"].append(float(subprocess.run(
                [profsh, "run", "--no-table", "--activities", "nvtx", "-o", out, "--", nvtx, "30", pairs],
                capture_output=True, text=True).stdout))
            nv["--flight-recorder 20"].append(float(subprocess.run(
                [profsh, "run", "--no-table", "--activities", "nvtx", "--flight-recorder", "20",
                 "--step-marker", "^step$", "-o", out, "--", nvtx, "30", pairs],
                capture_output=True, text=True).stdout.split()[0]))
        print("NVTX push/pop pairs at full rate (30 steps of %s pairs): median ns per pair, median of %d runs"
              % (pairs, reps))
        for name, values in nv.items():
            print("  %-22s %7.2f ns" % (name, statistics.median(values)))

        # From a dump request to the saved traces.
        hang = os.path.join(build, "tests", "hang_workload")
        latencies = []
        run = subprocess.Popen([profsh, "run", "--no-table", "--activities", "nvtx", "--flight-recorder", "20",
                                "--step-marker", "^step$", "-o", out, "--", hang, "hang", "3000", "5", "-1", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(2)  # some steps in the ring
        workload = int(open("/proc/%d/task/%d/children" % (run.pid, run.pid)).read().split()[0])
        for _ in range(max(reps, 5)):
            start = time.perf_counter()
            r = subprocess.run([profsh, "trace", "--pid", str(workload), "--dump", "--timeout", "60"],
                               capture_output=True, text=True)
            if r.returncode == 0:
                latencies.append(time.perf_counter() - start)
            time.sleep(0.3)
        run.terminate()  # passed on to the workload: both end
        run.communicate(timeout=120)
        if latencies:
            print("dump request to saved traces (20 steps of the hang workload, profsh trace --pid --dump): "
                  "median %.1f ms over %d dumps" % (statistics.median(latencies) * 1e3, len(latencies)))
        else:
            print("dump request to saved traces: no dump succeeded")


if __name__ == "__main__":
    main()
