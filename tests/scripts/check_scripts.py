#!/usr/bin/env python3
"""Every file in scripts/ must load and run (bpftrace's tools-parsing test, for profsh recipes).
Each .lua file runs with no arguments (recipes default to the bundled samples) in an empty
temporary folder, so that files they write land there. The PyTorch recipes run their Python
workloads with Debian's interpreter (PROFSH_PYTHON), which has torch.

Usage: check_scripts.py PROFSH SCRIPTS_DIR
"""
import os
import subprocess
import sys
import tempfile


def main():
    profsh, scripts = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    names = sorted(f for f in os.listdir(scripts) if f.endswith(".lua"))
    env = dict(os.environ)
    if "PROFSH_PYTHON" not in env and os.path.exists("/usr/bin/python3"):
        env["PROFSH_PYTHON"] = "/usr/bin/python3"
    failures = 0
    outputs = {}
    for name in names:
        with tempfile.TemporaryDirectory() as cwd:
            proc = subprocess.run([profsh, os.path.join(scripts, name)], cwd=cwd, capture_output=True,
                                  text=True, timeout=300, env=env)
            produced = sorted(os.listdir(cwd))
            outputs[name] = proc.stdout
        if proc.returncode != 0:
            failures += 1
            print("FAIL %s (exit %d)\n%s%s" % (name, proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:]))
        else:
            lines = len(proc.stdout.splitlines())
            print("ok   %-22s %4d lines of output%s" % (name, lines, ("; wrote " + ", ".join(produced)) if produced else ""))
    # The live recipes profile what the seed recipe profiles: the model call, inside
    # record_function("model_inference"), which is then the whole of the CPU time (building the
    # model and initialising its weights is not part of it).
    import re
    out = outputs.get("resnet18_execution_time.lua", "")
    if not re.search(r"^ +model_inference +[\d.]+% +\S+ +100\.00% ", out, re.M) or "aten::uniform_" in out:
        failures += 1
        print("FAIL resnet18_execution_time.lua does not profile only the model call:\n" + out[-1500:])
    else:
        print("ok   resnet18_execution_time.lua profiles the model call (model_inference is 100% of the CPU time)")
    # A Python without torch: the error says how to name another one.
    with tempfile.TemporaryDirectory() as cwd:
        proc = subprocess.run([profsh, os.path.join(scripts, "resnet18_memory.lua")], cwd=cwd, capture_output=True,
                              text=True, timeout=300, env=dict(env, PROFSH_PYTHON="false"))
    if proc.returncode == 0 or "name it in PROFSH_PYTHON" not in proc.stderr:
        failures += 1
        print("FAIL without torch, the recipe's error does not point at PROFSH_PYTHON:\n" + proc.stderr[-1500:])
    else:
        print("ok   without torch, the recipe's error points at PROFSH_PYTHON")
    # The workloads beside the recipes: each parses (the recipes above have run them).
    for name in sorted(os.listdir(scripts)):
        path = os.path.join(scripts, name)
        if name.endswith(".py"):
            check = [sys.executable, "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])", path]
        elif name.endswith(".sh"):
            check = ["bash", "-n", path]
        else:
            continue
        proc = subprocess.run(check, capture_output=True, text=True)
        if proc.returncode != 0:
            failures += 1
            print("FAIL %s does not parse\n%s" % (name, proc.stderr[-2000:]))
    print("scripts: %d ran, %d failed" % (len(names), failures))
    return 1 if failures or not names else 0


if __name__ == "__main__":
    sys.exit(main())
