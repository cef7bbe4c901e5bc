"""The flight recorder's always-on cost, measured so that a shared 2-core virtual machine's noise shows:

- resnet18 training on the CPU (Debian's torch 1.13, /usr/bin/python3; batch 8x3x64x64, SGD,
  torch.set_num_threads(1)) in four configurations: no profiler, no profiler again (the control:
  what two identical configurations differ by here), under `profsh run --flight-recorder 20
  --step-marker optimizer`, and under torch.profiler active on every step (prof.step() each
  step). On this machine one process's speed depends on where its buffers land (address-space
  randomisation moves a process's median step by 10-15 %, two identical processes stepping in
  turn on one core differ by up to 13 %; with randomisation off they agree within 1 %), and the
  machine's speed drifts from second to second. So the bench runs GROUPS groups; a group starts
  one process per configuration, all alive at once, and they take steps in turn (one step at a
  time, order rotated every step, through FIFOs: at any moment one workload computes and the
  other core is free for profsh's threads), WARM untimed steps then STEPS timed ones each. Each
  process's figure is its median step; each group's ratio is a configuration's over the same
  group's first bare process. Printed per configuration: the median step, the geometric mean
  of the groups' ratios with a 95 % bootstrap interval (over groups), the median ratio, and the
  workload's drain-thread CPU per step. The control's row is the noise floor of the figure;
- the NVTX sample at full rate (bench/flight_nvtx: steps of 200 000 push/pop pairs): ns per pair
  bare, under profsh run and under --flight-recorder;
- profsh's own peak memory (VmHWM of the profsh process) and the ring's peak bytes (its summary
  line) during a resnet18 flight recording, beside the bound --flight-recorder-mb sets;
- the time from a dump request (profsh trace --pid PID --dump) to the saved traces.

  python3 bench/flight_recorder_bench.py BUILD_DIR [GROUPS] [STEPS] [WARM] [diagnose]

"diagnose" adds two configurations that split the flight recorder's cost: `profsh run
--activities nvtx` (the collector injected, torch's operator callback not installed) and
`--flight-recorder 20 --drain-ms 100`. The main thread's CPU per step (time.thread_time) is
printed beside the wall time: a CPU ratio that follows the wall ratio means the workload's own
thread does more work; one that does not means the thread waits or is preempted.
"""
import errno
import math
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time

TRAIN = r'''
import os, sys, time, torch, torchvision
mode, go_path, done_path, steps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
torch.set_num_threads(1)
torch.manual_seed(0)
model = torchvision.models.resnet18(num_classes=10)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(8, 3, 64, 64)
y = torch.randint(0, 10, (8,))
def step():
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
# A step starts when the coordinator writes a byte, and its time goes back as a line ("-": no
# coordinator, steps back to back, times to stdout).
go = open(go_path, "rb", buffering=0) if go_path != "-" else None
done = open(done_path, "w", buffering=1) if done_path != "-" else sys.stdout
def loop(after=None):
    for _ in range(steps):
        if go is not None and not go.read(1):
            return
        start, start_cpu = time.perf_counter(), time.thread_time()
        step()
        if after:
            after()
        done.write("%.9f %.9f\n" % (time.perf_counter() - start, time.thread_time() - start_cpu))
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
done.write("drain_cpu_s %.6f\n" % drain)
'''


def run_group(commands, steps, warm, work, group):
    """Starts one process per command, all at once, and has them take steps in turn; returns
    each process's timed steps (wall and main-thread CPU seconds) and its drain thread's CPU
    seconds."""
    processes, channels = [], []
    try:
        for i, command in enumerate(commands):
            go = os.path.join(work, "go.%d.%d" % (group, i))
            done = os.path.join(work, "done.%d.%d" % (group, i))
            os.mkfifo(go)
            os.mkfifo(done)
            argv = [a.replace("@GO@", go).replace("@DONE@", done) for a in command]
            err = open(os.path.join(work, "err.%d.%d" % (group, i)), "w")
            processes.append((subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err), argv, err.name))
            channels.append((go, done))
        pipes = []
        for (go, done), (process, argv, err) in zip(channels, processes):
            # The worker opens its go FIFO first: wait for that without blocking, so that a
            # process that died before (an option error, a failed import) is reported.
            while True:
                try:
                    fd = os.open(go, os.O_WRONLY | os.O_NONBLOCK)
                    break
                except OSError as e:
                    if e.errno != errno.ENXIO:
                        raise
                if process.poll() is not None:
                    sys.exit("flight_recorder_bench: %s ended before its first step:\n%s" %
                             (" ".join(argv), open(err).read()[-2000:]))
                time.sleep(0.05)
            os.set_blocking(fd, True)
            pipes.append((os.fdopen(fd, "wb", buffering=0), open(done, "r")))
        times = [[] for _ in commands]
        for s in range(warm + steps):
            order = list(range(len(commands)))
            order = order[s % len(order):] + order[:s % len(order)]  # no fixed position
            for i in order:
                pipes[i][0].write(b"x")
                line = pipes[i][1].readline()
                if not line:
                    process, argv, err = processes[i]
                    sys.exit("flight_recorder_bench: %s ended early:\n%s" % (" ".join(argv), open(err).read()[-2000:]))
                if s >= warm:
                    wall, cpu = line.split()
                    times[i].append((float(wall), float(cpu)))
        drains = []
        for go, done in pipes:
            go.close()
            m = re.search(r"drain_cpu_s (\S+)", done.read())
            drains.append(float(m.group(1)) if m else 0.0)
            done.close()
        for process, argv, err in processes:
            if process.wait(timeout=600) != 0:
                sys.exit("flight_recorder_bench: %s failed:\n%s" % (" ".join(argv), open(err).read()[-2000:]))
            text = open(err).read()
            # A profsh run that recorded nothing measured nothing (a build folder without the
            # torch plugin's sources, a step marker that never matched).
            if argv[0].endswith("profsh") and "--activities torch" in " ".join(argv) and (
                    " 0 ranges," in text or " 0 steps seen" in text):
                sys.exit("flight_recorder_bench: %s recorded nothing:\n%s" % (" ".join(argv), text[-2000:]))
        return times, drains
    finally:
        for process, _, _ in processes:
            if process.poll() is None:
                process.kill()
                process.wait()


def geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def bootstrap_interval(ratios, rounds=4000, seed=1):
    """95 % interval of the geometric mean of ratios, resampling groups."""
    rng = random.Random(seed)
    means = sorted(geometric_mean([rng.choice(ratios) for _ in ratios]) for _ in range(rounds))
    return means[int(rounds * 0.025)], means[int(rounds * 0.975) - 1]


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
    groups = int(args[1]) if len(args) > 1 else 30
    steps = int(args[2]) if len(args) > 2 else 6
    warm = int(args[3]) if len(args) > 3 else 3
    diagnose = len(args) > 4 and args[4] == "diagnose"
    reps = 8
    profsh = os.path.join(build, "profsh")
    nvtx = os.path.join(build, "bench", "flight_nvtx")
    python = "/usr/bin/python3"
    bound_mb = 256
    with tempfile.TemporaryDirectory() as work:
        script = os.path.join(work, "train.py")
        with open(script, "w") as f:
            f.write(TRAIN)
        out = os.path.join(work, "t.profsh")

        def train(mode):
            return [python, script, mode, "@GO@", "@DONE@", str(warm + steps)]

        flight = [profsh, "run", "--no-table", "--activities", "torch", "--flight-recorder", "20",
                  "--flight-recorder-mb", str(bound_mb), "--step-marker", "optimizer", "-o", out, "--"]
        configs = {
            "no profiler": train("plain"),
            "no profiler (control)": train("plain"),
            "profsh --flight-recorder 20": flight + train("plain"),
            "torch.profiler every step": train("torch"),
        }
        if diagnose:
            # Where the flight recorder's cost comes from: the collector alone (injected, no
            # operator callback in torch), and the flight recorder draining every 100 ms.
            configs["profsh run --activities nvtx"] = [profsh, "run", "--no-table", "--activities", "nvtx",
                                                       "-o", out, "--"] + train("plain")
            configs["--flight-recorder 20 --drain-ms 100"] = (
                flight[:-1] + ["--drain-ms", "100", "--"] + train("plain"))
        names = list(configs)
        # One group first: builds and caches the operator source where needed (not counted).
        run_group([configs[n] for n in names], 1, 1, work, -1)
        load_before = os.getloadavg()
        started = time.time()
        medians = {n: [] for n in names}
        cpu_medians = {n: [] for n in names}
        drains = {n: [] for n in names}
        for g in range(groups):
            times, drain = run_group([configs[n] for n in names], steps, warm, work, g)
            for n, t, d in zip(names, times, drain):
                medians[n].append(statistics.median(w for w, _ in t))
                cpu_medians[n].append(statistics.median(c for _, c in t))
                drains[n].append(d / (warm + steps))
        load_after = os.getloadavg()
        print("resnet18 training, CPU, one torch thread, batch 8x3x64x64: %d groups of %d processes "
              "(one per configuration) taking steps in turn, %d untimed then %d timed steps each; %.0f s; "
              "load average %.1f before, %.1f after (%d cores)" % (
                  groups, len(names), warm, steps, time.time() - started, load_before[0], load_after[0], os.cpu_count()))
        print("  %-34s %9s %10s %17s %9s %17s %9s" % ("", "median", "ratio", "95 % interval", "median",
                                                       "main thread CPU", "drain CPU"))
        print("  %-34s %9s %10s %17s %9s %17s %9s" % ("", "step ms", "(geo mean)", "(bootstrap)", "ratio",
                                                       "ratio (interval)", "ms/step"))
        for n in names:
            ratios = [a / b for a, b in zip(medians[n], medians["no profiler"])]
            low, high = bootstrap_interval(ratios)
            cpu_ratios = [a / b for a, b in zip(cpu_medians[n], cpu_medians["no profiler"])]
            cpu_low, cpu_high = bootstrap_interval(cpu_ratios)
            print("  %-34s %9.1f %10.4f %8.4f-%-8.4f %9.4f %6.4f (%.3f-%.3f) %9.2f" % (
                n, statistics.median(medians[n]) * 1e3, geometric_mean(ratios), low, high,
                statistics.median(ratios), geometric_mean(cpu_ratios), cpu_low, cpu_high,
                statistics.median(drains[n]) * 1e3))

        # The ring's and profsh's memory during a flight recording.
        cmd = flight + [python, script, "plain", "-", "-", "30"]
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
