#!/usr/bin/env python3
"""Library ITT tasks against torch.profiler's table (issue 34, item 8).

oneDNN reports its primitives (convolution, reorder) as ITT tasks, which profsh's collector
records. As rows of key_averages they would take self time from torch's operators
(aten::mkldnn_convolution 0.63 % where torch.profiler shows 9.33 % on the issue's program). By
default a trace with PyTorch operators leaves ITT tasks out of the operator view: every
operator's share of self CPU time must then be torch.profiler's within 1 point on the same
script (tests/torch/onednn_workload.py, Debian's torch 1.13). key_averages{itt_domains=true}
brings the tasks back: then they are rows and take the convolutions' self time, which shows the
default is what makes the shares agree. torch's own shares move by several points between runs
on a busy machine (conv 84.7 to 89.1 % in three runs here), so profsh's must lie within 1 point
of the range three torch.profiler runs span, in one of up to three profsh runs. Shares are taken
among the operators: the workload's `measured` range (the capture range) has as self time the
time between operators, which holds each profiler's own cost per operator, and torch.profiler's
is several times profsh's (it took 7.0-7.5 % against profsh's 5.5 % in one CI run, moving every
operator's share by 1.5 points for a reason that has nothing to do with ITT tasks).

Usage: check_itt_shares.py PROFSH TESTS_TORCH_DIR   (exit 77: torch is not installed)
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

PYTHON = os.environ.get("PROFSH_TORCH_PYTHON", "/usr/bin/python3")
failures = []

SHARES = r"""
local t = profsh.load(arg[1])
local function shares(tag, avgs)
  local total = 0
  for _, a in ipairs(avgs) do total = total + a.self_cpu_time_total end
  for _, a in ipairs(avgs) do print(tag, a.key, 100 * a.self_cpu_time_total / total) end
end
local default = t:key_averages()
shares("default", default)
shares("with_itt", t:key_averages{itt_domains = true})
print("left_out", default.itt_tasks_left_out, table.concat(default.itt_domains_left_out, ","))
"""


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


MEASURED = "measured"  # the workload's capture range, around the operators


def shares_of(self_times):
    """Each row's share of the operators' self time (the capture range left out)."""
    ops = {k: v for k, v in self_times.items() if k != MEASURED}
    total = sum(ops.values())
    return {k: 100.0 * v / total for k, v in ops.items()}


def torch_run(workload, work):
    rows = os.path.join(work, "torch.json")
    subprocess.run([PYTHON, workload, rows], check=True, timeout=300)
    with open(rows) as f:
        return shares_of(json.load(f))


def profsh_run(profsh, workload, work):
    for old in glob.glob(os.path.join(work, "onednn*.profsh")):
        os.remove(old)
    subprocess.run([profsh, "run", "--no-table", "--capture-range", "measured", "-o",
                    os.path.join(work, "onednn.profsh"), "--", PYTHON, workload], check=True,
                   timeout=300, capture_output=True)
    trace, = glob.glob(os.path.join(work, "onednn.*.profsh"))  # the capture range's one window
    script = os.path.join(work, "shares.lua")
    with open(script, "w") as f:
        f.write(SHARES)
    out = subprocess.run([profsh, script, trace], check=True, timeout=300, capture_output=True,
                         text=True).stdout
    got = {"default": {}, "with_itt": {}, "left_out": 0, "domains": ""}
    for line in out.splitlines():
        f = line.split("\t")
        if f[0] in ("default", "with_itt"):
            got[f[0]][f[1]] = float(f[2])
        elif f[0] == "left_out":
            got["left_out"], got["domains"] = int(f[1]), f[2] if len(f) > 2 else ""
    got["default"] = shares_of(got["default"])
    got["with_itt"] = shares_of(got["with_itt"])
    return got


def main():
    profsh, here = sys.argv[1], sys.argv[2]
    if subprocess.run([PYTHON, "-c", "import torch"], capture_output=True).returncode != 0:
        print("torch is not installed; skipping")
        return 77
    workload = os.path.join(here, "onednn_workload.py")
    with tempfile.TemporaryDirectory(prefix="profsh_itt_") as work:
        # torch's own shares move by several points from run to run on a busy machine: profsh's
        # must lie within 1 point of the range three torch.profiler runs span.
        torch_runs = [torch_run(workload, work) for _ in range(3)]
        big = sorted({k for r in torch_runs for k, v in r.items() if v >= 1.0})
        low = {k: min(r.get(k, 0.0) for r in torch_runs) for k in big}
        high = {k: max(r.get(k, 0.0) for r in torch_runs) for k in big}

        def outside(shares):
            return max(max(low[k] - shares.get(k, 0.0), shares.get(k, 0.0) - high[k], 0.0) for k in big)

        for attempt in range(3):
            got = profsh_run(profsh, workload, work)
            worst = outside(got["default"])
            if worst <= 1.0:
                break
        print("torch.profiler: " + ", ".join("%s %.2f-%.2f%%" % (k, low[k], high[k]) for k in big))
        print("profsh:         " + ", ".join("%s %.2f%%" % (k, got["default"].get(k, 0.0)) for k in big))
        check(worst <= 1.0, "every operator's self-CPU share within 1 point of torch.profiler's "
              "(%.2f points outside, run %d)" % (worst, attempt + 1))
        check(got["left_out"] > 0 and "dnnl::primitive::execute" in got["domains"]
              and "convolution" not in got["default"],
              "oneDNN's ITT tasks are left out of the default view (%d tasks, domains %s)"
              % (got["left_out"], got["domains"]))
        conv = "aten::mkldnn_convolution"
        with_itt = got["with_itt"]
        check("convolution" in with_itt and with_itt.get(conv, 0.0) < low[conv] - 10,
              "itt_domains=true: the tasks are rows and take the convolutions' self time (%s %.2f%% "
              "against torch's %.2f%%; convolution %.2f%%)"
              % (conv, with_itt.get(conv, 0.0), low[conv], with_itt.get("convolution", 0.0)))
        # The command line: the table says what it left out; --itt-domains=NAME brings them in.
        for flag, shown in (([], False), (["--itt-domains=dnnl::primitive::execute"], True)):
            r = subprocess.run([profsh, "run", "--capture-range", "measured", "--row-limit", "40"] + flag +
                               ["-o", os.path.join(work, "cli.profsh"), "--", PYTHON, workload],
                               capture_output=True, text=True, timeout=300)
            rows = [line.split()[0] for line in r.stdout.splitlines() if line.strip()]
            noted = "ITT tasks (dnnl::primitive::execute) not in the table" in r.stderr
            check(r.returncode == 0 and ("convolution" in rows) == shown and ("reorder" in rows) == shown
                  and noted != shown,
                  "profsh run %s: oneDNN's tasks %s the table, %s (rows %s)"
                  % (" ".join(flag) or "(default)", "in" if shown else "out of",
                     "no note" if shown else "and a note says so", rows[4:12]))
    print("itt shares: %d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
