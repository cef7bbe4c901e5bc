#!/usr/bin/env python3
"""Every example of the README runs as written (extracted from the file, so it cannot drift).

The ```console blocks are run: each "$ COMMAND" line with sh, from a fresh folder where `build`
is the build folder and `scripts` the repository's scripts/ (so the README's relative paths work
and what the examples write lands there), in order, so that later examples see what earlier
ones wrote. The lines after a command are its output (standard output and error together). A
command `build/profsh` alone is the REPL: the "profsh> " lines after it are typed into it. The
output must match what the README shows, except that numbers and runs of spaces may differ
(times change from run to run, and their units with them) and a line "..." stands for any
number of lines. A command must exit with status 0, and no session folder may be left behind.

Usage: check_readme.py README BUILD_DIR SCRIPTS_DIR
"""
import os
import re
import subprocess
import sys
import tempfile


def blocks(readme):
    """(line number, [lines]) of each ```console block."""
    out, current, start = [], None, 0
    for n, line in enumerate(open(readme, encoding="utf-8").read().split("\n"), 1):
        if current is None and line.strip() == "```console":
            current, start = [], n
        elif current is not None and line.strip() == "```":
            out.append((start, current))
            current = None
        elif current is not None:
            current.append(line)
    return out


def pattern(line):
    """A shown output line as a regular expression: any number where a number is, any run of
    spaces where spaces are."""
    # A number takes its unit along: a time shown as 1.662s may be 787.178ms on another run.
    parts = re.split(r"(\d[\d,]*(?:\.\d+)?[a-zA-Z]*| +)", line)
    out = ""
    for p in parts:
        if not p:
            continue
        if p[0].isdigit():
            out += r"-?\d[\d,]*(?:\.\d+)?[a-zA-Z]*"
        elif p[0] == " ":
            out += " *"
        else:
            out += re.escape(p)
    return out


def matches(shown, got):
    """Whether the actual lines fit the shown ones ("..." elides any number of lines)."""
    def fit(i, j):
        if i == len(shown):
            return j == len(got)
        if shown[i] == "...":
            return any(fit(i + 1, k) for k in range(j, len(got) + 1))
        return j < len(got) and re.fullmatch(pattern(shown[i]), got[j]) is not None and fit(i + 1, j + 1)
    return fit(0, 0)


def commands(lines):
    """(command, typed REPL lines, shown output lines)."""
    out = []
    for line in lines:
        if line.startswith("$ "):
            out.append([line[2:], [], []])
        elif line.startswith("profsh> ") and out:
            out[-1][1].append(line[len("profsh> "):])
            out[-1][2].append(None)  # where the REPL echoes nothing: input is not shown on a pipe
        elif out:
            out[-1][2].append(line)
    return out


def main():
    readme, build, scripts = (os.path.abspath(a) for a in sys.argv[1:4])
    failures, ran = [], 0
    with tempfile.TemporaryDirectory(prefix="profsh_readme_") as work:
        cwd, tmp = os.path.join(work, "cwd"), os.path.join(work, "tmp")
        os.mkdir(cwd)
        os.mkdir(tmp)
        os.symlink(build, os.path.join(cwd, "build"))
        os.symlink(scripts, os.path.join(cwd, "scripts"))
        env = dict(os.environ, TMPDIR=tmp, PROFSH_HISTORY="")
        for start, lines in blocks(readme):
            for command, typed, shown in commands(lines):
                ran += 1
                repl = command.strip() == "build/profsh"
                if repl:
                    # The REPL's prompt and echo are written only on a terminal; the runner
                    # reads the answers, so the typed lines are taken out of what is compared.
                    args = ["build/profsh", "-i"]
                    proc = subprocess.run(args, input="\n".join(typed) + "\n", stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, text=True, cwd=cwd, env=env, timeout=300)
                    want = [l for l in shown if l is not None]
                    got = [l for l in proc.stdout.rstrip("\n").split("\n") if not l.startswith("profsh> ")]
                else:
                    proc = subprocess.run(["sh", "-c", command], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                          text=True, cwd=cwd, env=env, timeout=300)
                    want = shown
                    got = proc.stdout.rstrip("\n").split("\n") if proc.stdout.strip("\n") else []
                while want and want[-1] == "":
                    want.pop()
                while got and got[-1] == "":
                    got.pop()
                if proc.returncode != 0 or not matches(want, got):
                    failures.append("README.md:%d: $ %s\n  exit status %d\n  shown:\n    %s\n  got:\n    %s" % (
                        start, command, proc.returncode, "\n    ".join(want), "\n    ".join(got)))
                    print("FAIL " + command)
                else:
                    print("ok   " + command)
        left = [n for n in os.listdir(tmp) if n.startswith("profsh-session-")]
        if left:
            failures.append("session folders left behind: " + ", ".join(left))
    for f in failures:
        print(f)
    print("readme: %d examples, %d failed" % (ran, len(failures)))
    return 1 if failures or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
