#!/usr/bin/env python3
"""The PyTorch operator source built on first use (issue 14), with no prebuilt one
(PROFSH_TORCH_PREBUILT=0) and a fresh cache (PROFSH_CACHE):

Debian 12 (torch 1.13, Python 3.11):
  - two processes importing torch at the same moment build it once (one build line) and both
    record operators;
  - a second run uses the cached one (no build line), and its operator counts per (name, input
    shapes) equal torch.profiler's on the same script (tests/torch/workload.py);
  - a broken compiler (CXX=/bin/false) or one that finds no headers: one line saying why, no
    crash, the workload's output and exit status unchanged.
Debian 13 root (torch 2.6, Python 3.13; tests/torch2/debian13_root.sh, skipped when it cannot
be made): two ranks build it once there too.

The plugins built here stay in CACHE (the ctest's folder) for the torch 2.6 comparison that runs
after this test (torch_operators_debian13), so that the 2.6 build is paid once per run.

Usage: check_plugin_build.py PROFSH TESTS_DIR CACHE   (exit 77: no torch in either environment)
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

failures = []
BUILD_LINE = "profsh: building the PyTorch operator source for torch "
# Where no operator source can be had, torch's own profiler takes over, and this one line says why.
NOT_RECORDED = "profsh: operators are recorded by torch.profiler instead ("


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


MM_PER_PID = r"""
local t = profsh.load(arg[1])
local per = {}
for _, e in ipairs(t:events{name = "aten::mm", limit = 100000}) do per[e.pid] = (per[e.pid] or 0) + 1 end
for pid, n in pairs(per) do print(pid, n) end
"""


def profsh_run(wrap, profsh, cache, work, name, argv, extra_env=None, options=()):
    env = dict(os.environ, PROFSH_CACHE=cache, PROFSH_TORCH_PREBUILT="0")
    env.update(extra_env or {})
    out = os.path.join(work, name + ".profsh")
    r = subprocess.run(wrap + [profsh, "run", "--activities", "torch", "--no-table", *options, "-o", out, "--"] + argv,
                       capture_output=True, text=True, cwd=work, env=env, timeout=900)
    return r, out


def build_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith(BUILD_LINE)]


def two_ranks(label, wrap, python, profsh, here, cache, work):
    """Two processes importing torch at once: one build, both record."""
    r, out = profsh_run(wrap, profsh, cache, work, label + "_ranks", [python, os.path.join(here, "two_ranks.py")])
    lines = build_lines(r.stderr)
    check(r.returncode == 0 and len(lines) == 1 and NOT_RECORDED not in r.stderr,
          "%s: two processes importing torch at once build the operator source once (%d build lines; %s)"
          % (label, len(lines), (lines or [r.stderr[-400:]])[0]))
    plugins = glob.glob(os.path.join(cache, "torch_plugin", "*.so"))
    check(len(plugins) == 1 and not glob.glob(os.path.join(cache, "torch_plugin", "*.tmp")),
          "%s: one plugin in the cache, no temporary file left (%s)" % (label, plugins))
    script = os.path.join(work, "mm_per_pid.lua")
    open(script, "w").write(MM_PER_PID)
    d = subprocess.run([profsh, script, out], capture_output=True, text=True, timeout=300)
    per_pid = dict(line.split("\t") for line in d.stdout.split("\n") if "\t" in line)
    check(d.returncode == 0 and len(per_pid) == 2 and all(int(n) == 5 for n in per_pid.values()),
          "%s: both processes recorded their 5 aten::mm (per pid: %s %s)" % (label, per_pid, d.stderr[-200:]))
    return plugins


def debian12(profsh, here, cache):
    import check_torch  # tests/torch: the workload's rows under torch.profiler and under profsh
    python = "/usr/bin/python3"
    workload = os.path.join(os.path.dirname(here), "torch", "workload.py")
    with tempfile.TemporaryDirectory(prefix="profsh_plugin_build_") as work:
        two_ranks("Debian 12", [], python, profsh, here, cache, work)
        r, out = profsh_run([], profsh, cache, work, "again", [python, workload, "plain"],
                            options=["--record-shapes", "--capture-range", "measured"])
        windows = glob.glob(os.path.join(work, "again.*.profsh"))
        check(r.returncode == 0 and not build_lines(r.stderr) and len(windows) == 1 and "Exception" not in r.stderr,
              "Debian 12: the next run uses the cached operator source: no build line (%s)" % r.stderr[-300:])
        if windows:
            rows = check_torch.dump(profsh, work, windows[0])[0]
            want = {(x["key"], x["shapes"]): x["count"] for x in check_torch.TorchRuns(workload).docs[0]["rows"]}
            ours = {k: v[0] for k, v in rows.items()}
            diff = sorted((k, want.get(k), ours.get(k)) for k in set(want) | set(ours) if want.get(k) != ours.get(k))
            check(not diff and len(want) > 20,
                  "Debian 12: operator counts per (name, input shapes) equal torch.profiler's (%d rows; differ: %s)"
                  % (len(want), diff[:3]))
        # A compiler that fails, and one that finds no headers: the line, and the workload as it was.
        script = os.path.join(work, "says.py")
        open(script, "w").write("import sys, torch\nprint('sum', int(torch.ones(3).sum()))\nsys.exit(3)\n")
        bare = subprocess.run([python, script], capture_output=True, text=True)
        for n, (what, cxx, why) in enumerate([("a broken compiler (CXX=/bin/false)", "/bin/false", "/bin/false exited with status 1"),
                               ("a compiler that finds no headers", "c++ -nostdinc++", "exited with status 1: ")]):
            fresh = tempfile.mkdtemp(prefix="cache_", dir=work)
            r, _ = profsh_run([], profsh, fresh, work, "broken%d" % n, [python, script], {"CXX": cxx})
            said = [l for l in r.stderr.splitlines() if l.startswith(NOT_RECORDED)]
            check(r.returncode == bare.returncode == 3 and r.stdout == bare.stdout and len(said) == 1 and why in said[0]
                  and "Traceback" not in r.stderr,
                  "Debian 12: %s: one line says why (torch.profiler records the operators), the workload's output "
                  "and status (%d) are unchanged (%s)"
                  % (what, r.returncode, said or r.stderr[-300:]))


def debian13(profsh, here, cache):
    made = subprocess.run([os.path.join(here, "debian13_root.sh")], capture_output=True, text=True)
    if made.returncode != 0:
        print("skip: no Debian 13 root (%s)" % made.stderr.strip()[-300:])
        return False
    wrap = [os.path.join(here, "in_root.sh"), made.stdout.strip()]
    with tempfile.TemporaryDirectory(prefix="profsh_plugin_build_") as work:
        two_ranks("Debian 13 (torch 2.6)", wrap, "/usr/bin/python3", profsh, here, cache, work)
    return True


def main():
    profsh, here, cache = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    sys.path.insert(0, os.path.join(os.path.dirname(here), "torch"))
    ran = False
    if subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True).returncode == 0:
        shutil.rmtree(os.path.join(cache, "debian12"), ignore_errors=True)
        debian12(profsh, here, os.path.join(cache, "debian12"))
        ran = True
    else:
        print("skip: no torch for /usr/bin/python3")
    shutil.rmtree(os.path.join(cache, "debian13"), ignore_errors=True)
    ran = debian13(profsh, here, os.path.join(cache, "debian13")) or ran
    if not ran:
        return 77
    print("plugin build: %d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
