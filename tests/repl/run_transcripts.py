#!/usr/bin/env python3
"""REPL transcript tests, in the manner of sysbench's cram tests.

A .t file is a session as it appears on screen: lines starting with "profsh> " (or ">> " for a
continuation) are what the user typed, everything else is what profsh printed. Lines starting
with "#" are comments. An expected line ending in " (re)" is a regular expression.
The runner types the input lines into `profsh -i` from the tests/ folder (so paths in the
transcripts are relative to it) and compares the whole screen.

A transcript whose first line (after comments) starts with "$ " is a shell session instead, in
the manner of cram: each "$ " line is run with sh in a fresh folder, with `profsh` on the PATH
and $TESTS naming the tests/ folder and $BUILD the build folder; the lines after it are its
output (standard output and error together), and "[N]" is its exit status when not 0. The
session folder profsh makes for a run must be gone afterwards ($TMPDIR is watched).

Usage: run_transcripts.py PROFSH TRANSCRIPT_DIR
"""
import os
import re
import subprocess
import sys
import tempfile


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


def run_shell(profsh, path, tests_dir):
    with open(path, encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f if not l.startswith("#")]
    while lines and lines[-1] == "":
        lines.pop()
    # (command, expected output lines)
    blocks = []
    for l in lines:
        if l.startswith("$ "):
            blocks.append((l[2:], []))
        elif blocks:
            blocks[-1][1].append(l)
    problems = []
    bin_dir = os.path.dirname(profsh)
    with tempfile.TemporaryDirectory(prefix="profsh_transcript_") as work:
        tmp, cwd = os.path.join(work, "tmp"), os.path.join(work, "cwd")
        os.mkdir(tmp)
        os.mkdir(cwd)
        env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""), TESTS=tests_dir,
                   BUILD=bin_dir, TMPDIR=tmp, PROFSH_HISTORY="")
        for command, want in blocks:
            proc = subprocess.run(["sh", "-c", command], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, cwd=cwd, env=env, timeout=300)
            got = proc.stdout.rstrip("\n").split("\n") if proc.stdout.strip("\n") else []
            if proc.returncode != 0:
                got.append("[%d]" % proc.returncode)
            for i in range(max(len(got), len(want))):
                g = got[i] if i < len(got) else "<missing>"
                w = want[i] if i < len(want) else "<nothing expected>"
                ok = re.fullmatch(w[: -len(" (re)")], g) is not None if w.endswith(" (re)") else g == w
                if not ok:
                    problems.append("$ %s\n  line %d:\n  expected: %s\n  got:      %s" % (command, i + 1, w, g))
                    break
        left = sorted(n for n in os.listdir(tmp) if n.startswith("profsh-session-"))
        if left:
            problems.append("session folders left behind in $TMPDIR: %s" % ", ".join(left))
    return problems


def is_shell_transcript(path):
    with open(path, encoding="utf-8") as f:
        for l in f:
            if not l.startswith("#") and l.strip():
                return l.startswith("$ ")
    return False


def main():
    profsh, tdir = os.path.abspath(sys.argv[1]), sys.argv[2]
    cwd = os.path.dirname(os.path.abspath(tdir))
    failures = 0
    files = sorted(f for f in os.listdir(tdir) if f.endswith(".t"))
    for name in files:
        path = os.path.join(tdir, name)
        problems = run_shell(profsh, path, cwd) if is_shell_transcript(path) else run(profsh, path, cwd)
        if problems:
            failures += 1
            print("FAIL %s\n%s" % (name, "\n".join(problems)))
        else:
            print("ok   %s" % name)
    print("transcripts: %d passed, %d failed" % (len(files) - failures, failures))
    return 1 if failures or not files else 0


if __name__ == "__main__":
    sys.exit(main())
