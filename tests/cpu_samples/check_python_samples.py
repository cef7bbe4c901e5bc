#!/usr/bin/env python3
"""The cpu activity's Python frames end to end: python_work.py (step() calling torch.mm, busy()
in pure Python, each function's CPU time measured by the script) runs under
`profsh run --activities nvtx,torch,cpu`. The main thread's samples must carry the Python stack
spliced in at the interpreter's eval loop: `python_work.py(N): step` above torch's native frames,
pure-Python time under `python_work.py(M): busy`, Python frames in call order below the native
frames they call, none left open once the profile function is replaced, and step's and busy's shares of the samples within 10 points of the split the
script measured. The same for two more Python threads (one running before torch's import, one
a thread pool's, started after it): their samples carry thread_work and thread_step above
torch's native frames, below the threading frames they were running in, with thread_step's and
thread_busy's shares within 10 points of what each thread measured.

Usage: check_python_samples.py PROFSH [PYTHON]
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "python_work.py")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


DUMP = r"""
local t = profsh.load(arg[1])
for _, r in ipairs(t:samples{}) do print("S", r.tid, r["function"], r.stack, r.weight) end
local f = t:flamegraph(arg[2], {stacks = "samples"})
print("F", f.stacks)
"""

NATIVE_TORCH = re.compile(r"^(at::|mkl|.*sgemm|.*gemm_|torch::autograd::THPVariable_mm|THPVariable_mm)")


def def_line(name):
    with open(SCRIPT) as f:
        for n, line in enumerate(f, 1):
            if line.startswith("def %s(" % name):
                return n
    raise SystemExit("python_work.py: no def " + name)


def torch_above(stack, at):
    """torch's native frames sit above stack[at], none below it."""
    return any(NATIVE_TORCH.match(x) for x in stack[at + 1:]) and \
        not any(NATIVE_TORCH.match(x) for x in stack[:at])


def check_thread(label, tid, measured, samples, frame):
    """A Python thread other than the main one: its samples carry its Python frames too."""
    mine = [s for s in samples if s[0] == tid]
    py = [s for s in mine if frame["thread_work"] in s[2]]
    check(len(py) >= 300 and len(py) >= 0.9 * len(mine),
          "%s thread: at least 300 and 90%% of its samples carry its Python frames (%d of %d)" %
          (label, len(py), len(mine)))
    # The frames it was running before its first event (threading's bootstrap) come first.
    def ordered(stack):
        boot = [i for i, x in enumerate(stack) if x.endswith("): _bootstrap_inner")]
        return bool(boot) and boot[0] < stack.index(frame["thread_work"])
    check(all(ordered(s[2]) for s in py) and py,
          "%s thread: threading's _bootstrap_inner lies below thread_work in every sample (%d of "
          "%d; e.g. %s)" % (label, sum(1 for s in py if ordered(s[2])), len(py),
                            ";".join(py[0][2][:12]) if py else ""))
    under = {n: [s for s in py if frame[n] in s[2]] for n in ("thread_step", "thread_busy")}
    for n in under:
        got = len(under[n]) / max(1, len(py))
        check(abs(got - measured[n]) <= 0.10,
              "%s thread: %s has %.1f%% of its Python samples (it measured %.1f%%, +- 10)" %
              (label, n, 100 * got, 100 * measured[n]))
    native = [s for s in under["thread_step"]
              if torch_above(s[2], s[2].index(frame["thread_step"]))]
    check(len(native) >= 0.6 * max(1, len(under["thread_step"])),
          "%s thread: thread_step's samples show torch's native frames above it (%d of %d)" %
          (label, len(native), len(under["thread_step"])))


def main():
    profsh = sys.argv[1]
    python = sys.argv[2] if len(sys.argv) > 2 else "/usr/bin/python3"
    if subprocess.run([python, "-c", "import torch"], capture_output=True).returncode != 0:
        print("skipped: %s cannot import torch" % python)
        return 77
    frame = {n: "python_work.py(%d): %s" % (def_line(n), n)
             for n in ("step", "busy", "main", "thread_work", "thread_step", "thread_busy")}
    frame["<module>"] = "python_work.py(1): <module>"
    tmp = tempfile.mkdtemp(prefix="python-samples-")
    try:
        out = os.path.join(tmp, "run.profsh")
        r = subprocess.run([profsh, "run", "--activities", "nvtx,torch,cpu", "--sample-rate", "999",
                            "--no-table", "-o", out, "--", python, SCRIPT, "1.5"],
                           capture_output=True, text=True, timeout=180)
        check(r.returncode == 0, "profsh run exits 0 (%s)" % r.stderr.strip()[-400:])
        split = re.search(r"SPLIT step ([\d.]+) busy ([\d.]+)", r.stdout)
        check(split is not None, "the script measured its split (%s)" % r.stdout.strip()[-200:])
        if split is None:
            return 1
        measured = {"step": float(split.group(1)), "busy": float(split.group(2))}
        script = os.path.join(tmp, "dump.lua")
        with open(script, "w") as f:
            f.write(DUMP)
        svg = os.path.join(tmp, "samples.svg")
        d = subprocess.run([profsh, script, out, svg], capture_output=True, text=True, timeout=120)
        check(d.returncode == 0, "the samples load (%s)" % d.stderr.strip()[-300:])
        samples = []
        for line in d.stdout.splitlines():
            f = line.split("\t")
            if f[0] == "S":
                # co_filename as the script was named (here an absolute path): its base name.
                stack = [re.sub(r"^.*/(python_work\.py\()", r"\1", x) for x in f[3].split(";")]
                samples.extend([(f[1], f[2], stack)] * int(f[4]))
        py = [s for s in samples if frame["main"] in s[2]]
        check(len(py) >= 700, "at least 700 of the main thread's samples carry its Python frames "
              "(%d of %d samples)" % (len(py), len(samples)))
        # Call order: <module>, main, then step or busy, the native frames under them between.
        ordered = [s for s in py
                   if frame["<module>"] in s[2] and s[2].index(frame["<module>"]) < s[2].index(frame["main"])]
        check(len(ordered) == len(py), "every sample's Python frames are in call order "
              "(%d of %d)" % (len(ordered), len(py)))
        under = {n: [s for s in py if frame[n] in s[2]] for n in ("step", "busy")}
        for n in ("step", "busy"):
            got = len(under[n]) / max(1, len(py))
            check(abs(got - measured[n]) <= 0.10,
                  "%s has %.1f%% of the Python samples (the script measured %.1f%%, +- 10)" %
                  (n, 100 * got, 100 * measured[n]))
        # torch's native frames sit above step, never below it.
        step_native = [s for s in under["step"] if torch_above(s[2], s[2].index(frame["step"]))]
        check(len(step_native) >= 0.6 * max(1, len(under["step"])),
              "step's samples show torch's native frames above step (%d of %d, e.g. %s)" %
              (len(step_native), len(under["step"]),
               ";".join(step_native[0][2][-8:]) if step_native else
               (";".join(under["step"][0][2]) if under["step"] else "")))
        # The interpreter's frames of busy's samples lie above busy, with no torch frames.
        busy_leaf = [s for s in under["busy"]
                     if s[2].index(frame["busy"]) == max(i for i, x in enumerate(s[2])
                                                        if x.startswith("python_work.py("))
                     and not any(NATIVE_TORCH.match(x) for x in s[2])]
        check(len(busy_leaf) == len(under["busy"]) and under["busy"],
              "busy is the innermost Python frame of its samples, with no torch frames above "
              "(%d of %d)" % (len(busy_leaf), len(under["busy"])))
        # after() ran a third as long as the rest with the profile function gone: its samples
        # would show main() still open (with neither step nor busy) if the calls stayed open.
        stale = [s for s in py if frame["step"] not in s[2] and frame["busy"] not in s[2]]
        check(len(stale) <= 0.08 * len(py),
              "once the profile function is replaced, no Python frames stay open (%d of %d "
              "samples under main outside step and busy)" % (len(stale), len(py)))
        for m in re.finditer(r"TSPLIT (\w+) (\d+) thread_step ([\d.]+) thread_busy ([\d.]+)",
                             r.stdout):
            check_thread(m.group(1), m.group(2), {"thread_step": float(m.group(3)),
                                                  "thread_busy": float(m.group(4))},
                         samples, frame)
        check(len(re.findall("TSPLIT", r.stdout)) == 2, "both threads measured their split")
        text = open(svg).read() if os.path.exists(svg) else ""
        check(frame["step"] in text and frame["busy"] in text,
              "the samples flamegraph draws the Python frames")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
