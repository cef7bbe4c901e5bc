#!/usr/bin/env python3
"""The flight recorder's always-on cost, in one run (medians of REPS runs each):

- resnet18 training on the CPU (Debian's torch 1.13, /usr/bin/python3; batch 8x3x64x64, SGD,
  STEPS timed steps after 5 warm-up ones, one thread): the median step time with no profiler,
  under torch.profiler active on every step (prof.step() each step), under profsh run
  (the whole run recorded), and under profsh run --flight-recorder 20 --step-marker optimizer;
  each one's ratio to no profiler and the added time in %;
- the NVTX sample at full rate (bench/flight_nvtx: steps of 200 000 push/pop pairs): ns per pair
  bare, under profsh run and under --flight-recorder;
- profsh's own peak memory (VmHWM of the profsh process) and the ring's peak bytes (its summary
  line) during the resnet18 flight recording, beside the bound --flight-recorder-mb sets;
- the time from a dump request (profsh trace --pid PID --dump) to the saved traces.

  python3 bench/flight_recorder_bench.py BUILD_DIR [REPS] [STEPS]
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

TRAIN = r'''
import sys, time, torch, torchvision
torch.set_num_threads(1)
torch.manual_seed(0)
model = torchvision.models.resnet18(num_classes=10)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(8, 3, 64, 64)
y = torch.randint(0, 10, (8,))
mode, steps = sys.argv[1], int(sys.argv[2])
def step():
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
times = []
def loop(after=None):
    for i in range(5 + steps):
        start = time.perf_counter()
        step()
        if after:
            after()
        if i >= 5:
            times.append(time.perf_counter() - start)
if mode == "torch":
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        loop(prof.step)
else:
    loop()
times.sort()
print("median_step_s", times[len(times) // 2])
'''


def median_step(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    m = re.search(r"median_step_s (\S+)", r.stdout)
    if not m:
        sys.exit("flight_recorder_bench: %s failed:\n%s" % (" ".join(cmd), r.stderr[-2000:]))
    return float(m.group(1)), r


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
    reps = int(args[1]) if len(args) > 1 else 3
    steps = int(args[2]) if len(args) > 2 else 30
    profsh = os.path.join(build, "profsh")
    nvtx = os.path.join(build, "bench", "flight_nvtx")
    python = "/usr/bin/python3"
    bound_mb = 256
    with tempfile.TemporaryDirectory() as work:
        script = os.path.join(work, "train.py")
        with open(script, "w") as f:
            f.write(TRAIN)
        out = os.path.join(work, "t.profsh")
        runs = {
            "no profiler": [python, script, "plain", str(steps)],
            "torch.profiler every step": [python, script, "torch", str(steps)],
            "profsh run (whole run)": [profsh, "run", "--no-table", "--activities", "torch", "-o", out,
                                       "--", python, script, "plain", str(steps)],
            "profsh --flight-recorder 20": [profsh, "run", "--no-table", "--activities", "torch",
                                            "--flight-recorder", "20", "--flight-recorder-mb", str(bound_mb),
                                            "--step-marker", "optimizer", "-o", out,
                                            "--", python, script, "plain", str(steps)],
        }
        # One run first: builds and caches the operator source where needed (not timed).
        median_step(runs["profsh run (whole run)"])
        results = {k: [] for k in runs}
        for _ in range(reps):
            for name, cmd in runs.items():  # interleaved: drift on a shared machine hits all alike
                results[name].append(median_step(cmd)[0])
        base = statistics.median(results["no profiler"])
        print("resnet18 training, CPU, one thread, batch 8x3x64x64: median step time over %d steps, "
              "median of %d runs" % (steps, reps))
        for name, values in results.items():
            m = statistics.median(values)
            print("  %-30s %8.2f ms  x%.3f  (%+.1f %%)" % (name, m * 1e3, m / base, (m / base - 1) * 100))

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
