#!/usr/bin/env python3
"""resnet18 CPU inference where per-operator cost dominates (inputs 2x3x32x32, 300 iterations,
one thread): the time unprofiled, under torch.profiler with record_shapes, and under profsh
run with --record-shapes, in one run; medians of REPS runs each, then the added time per
operator for both profilers.

  python3 bench/torch_overhead.py BUILD_DIR [REPS] [--with-stack] [--fallback] [--wrap=CMD]

--with-stack adds Python stacks to both (torch's with_stack=True, profsh's --with-stack: each
operator takes the GIL to read the frames). --fallback also times profsh's other path, torch's
own profiler started inside the workload (PROFSH_TORCH_OPERATORS=torch.profiler). --wrap runs
every command under a prefix, e.g. --wrap="tests/torch2/in_root.sh ROOT" for the Debian 13 root's
torch 2.6. One profsh run before the timed ones builds and caches the operator source where the
workload's torch needs one (outside the figures).
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

WORKLOAD = r'''
import sys, time, torch, torchvision
torch.set_num_threads(1)
model = torchvision.models.resnet18().eval()
x = torch.randn(2, 3, 32, 32)
mode = sys.argv[1]
with torch.no_grad():
    for _ in range(5):
        model(x)
    def run():
        for _ in range(300):
            model(x)
    start = time.perf_counter()
    if mode == "torch":
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_stack=len(sys.argv) > 2) as prof:
            run()
        ops = len(prof.events())
    else:
        run()
        ops = 0
    print(time.perf_counter() - start, ops)
'''


def main():
    stack = "--with-stack" in sys.argv
    fallback = "--fallback" in sys.argv
    wrap = []
    for a in sys.argv[1:]:
        if a.startswith("--wrap="):
            wrap = a[len("--wrap="):].split()
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    build = os.path.abspath(args[0])
    reps = int(args[1]) if len(args) > 1 else 5
    python = "/usr/bin/python3"
    with tempfile.TemporaryDirectory() as work:
        script = os.path.join(work, "resnet_inference.py")
        open(script, "w").write(WORKLOAD)
        modes = ("plain", "torch", "profsh") + (("fallback",) if fallback else ())
        times = {mode: [] for mode in modes}
        ops = 0
        ranges = 0

        def command(mode):
            if mode in ("profsh", "fallback"):
                return wrap + [os.path.join(build, "profsh"), "run", "--activities", "torch", "--record-shapes",
                               "--no-table", "-o", os.path.join(work, "t.profsh")] + \
                    (["--with-stack"] if stack else []) + ["--", python, script, "plain"]
            return wrap + [python, script, mode] + (["stack"] if stack else [])

        def env(mode):
            return dict(os.environ, PROFSH_TORCH_OPERATORS="torch.profiler") if mode == "fallback" else None

        subprocess.run(command("profsh"), capture_output=True, text=True, cwd=work)
        for _ in range(reps):
            for mode in modes:
                r = subprocess.run(command(mode), capture_output=True, text=True, cwd=work, env=env(mode))
                if r.returncode != 0 or len(r.stdout.split()) < 2:
                    sys.exit("%s failed (%d): %s" % (mode, r.returncode, r.stderr[-800:]))
                seconds, n = r.stdout.split()[-2:]
                times[mode].append(float(seconds))
                if mode == "torch":
                    ops = int(n)
                if mode == "profsh":
                    for part in r.stderr.split(";"):
                        if "ranges" in part:
                            ranges = int(part.split(",")[2].split()[0])
    m = {k: statistics.median(v) for k, v in times.items()}
    added_torch, added_profsh = m["torch"] - m["plain"], m["profsh"] - m["plain"]
    print("resnet18 inference, 2x3x32x32, 300 iterations, one thread (medians of %d runs)%s:"
          % (reps, ", with Python stacks" if stack else ""))
    print("  unprofiled                     %.3f s" % m["plain"])
    print("  torch.profiler, record_shapes  %.3f s (%.2fx; +%.3f s)" % (m["torch"], m["torch"] / m["plain"], added_torch))
    print("  profsh run --record-shapes     %.3f s (%.2fx; +%.3f s)" % (m["profsh"], m["profsh"] / m["plain"], added_profsh))
    print("  profsh's added time is %.0f%% of torch.profiler's" % (100 * added_profsh / added_torch))
    if fallback:
        added_fallback = m["fallback"] - m["plain"]
        print("  profsh, torch.profiler path    %.3f s (%.2fx; +%.3f s): %.0f%% of torch.profiler's added time"
              % (m["fallback"], m["fallback"] / m["plain"], added_fallback, 100 * added_fallback / added_torch))
    if ops:
        print("  per operator: torch.profiler %.2f us, profsh %.2f us (%d operators; profsh recorded %d ranges)"
              % (1e6 * added_torch / ops, 1e6 * added_profsh / ops, ops, ranges))


if __name__ == "__main__":
    main()
