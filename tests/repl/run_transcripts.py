#!/usr/bin/env python3
"""REPL transcript tests, in the manner of sysbench's cram tests.

A .t file is a session as it appears on screen: lines starting with "profsh> " (or ">> " for a
continuation) are what the user typed, everything else is what profsh printed. Lines starting
with "#" are comments. An expected line ending in " (re)" is a regular expression.
The runner types the input lines into `profsh -i` from the tests/ folder (so paths in the
transcripts are relative to it) and compares the whole screen.

Usage: run_transcripts.py PROFSH TRANSCRIPT_DIR
"""
import os
import re
import subprocess
import sys


def run(profsh, path, cwd):
    with open(path, encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f if not l.startswith("#")]
    inputs = []
    for l in lines:
        if l.startswith("profsh> "):
            inputs.append(l[len("profsh> "):])
        elif l.startswith(">> "):
            inputs.append(l[len(">> "):])
    proc = subprocess.run([profsh, "-i"], input="\n".join(inputs) + "\n", capture_output=True,
                          text=True, cwd=cwd, env=dict(os.environ, PROFSH_HISTORY=""))
    got = (proc.stdout + proc.stderr).rstrip("\n").split("\n")
    want = lines
    while want and want[-1] == "":
        want.pop()
    problems = []
    for i in range(max(len(got), len(want))):
        g = got[i] if i < len(got) else "<missing>"
        w = want[i] if i < len(want) else "<nothing expected>"
        if w.endswith(" (re)"):
            ok = re.fullmatch(w[: -len(" (re)")], g) is not None
        else:
            ok = g == w
        if not ok:
            problems.append("line %d:\n  expected: %s\n  got:      %s" % (i + 1, w, g))
            if len(problems) > 5:
                break
    if proc.returncode != 0:
        problems.append("exit status %d" % proc.returncode)
    return problems


def main():
    profsh, tdir = os.path.abspath(sys.argv[1]), sys.argv[2]
    cwd = os.path.dirname(os.path.abspath(tdir))
    failures = 0
    files = sorted(f for f in os.listdir(tdir) if f.endswith(".t"))
    for name in files:
        problems = run(profsh, os.path.join(tdir, name), cwd)
        if problems:
            failures += 1
            print("FAIL %s\n%s" % (name, "\n".join(problems)))
        else:
            print("ok   %s" % name)
    print("transcripts: %d passed, %d failed" % (len(files) - failures, failures))
    return 1 if failures or not files else 0


if __name__ == "__main__":
    sys.exit(main())
