#!/usr/bin/env python3
"""Drives the REPL on a pseudo-terminal, as a person would: line editing keys, Tab completion,
history recall, Ctrl-C at the prompt and during a running chunk, Ctrl-D to leave.

Usage: pty_session.py PROFSH TESTS_DIR
"""
import os
import pty
import re
import select
import shutil
import sys
import tempfile
import time

ANSI = re.compile(rb"\x1b\[[0-9;]*[A-Za-z]")


class Session:
    def __init__(self, profsh, cwd, home, args=()):
        pid, fd = pty.fork()
        if pid == 0:
            os.chdir(cwd)
            os.environ["HOME"] = home
            os.environ["PROFSH_HISTORY"] = os.path.join(home, "history")
            os.environ["TERM"] = "xterm"
            os.execv(profsh, [profsh, *args])
        self.pid, self.fd = pid, fd
        self.screen = b""

    def read_until(self, pattern, timeout=10.0):
        deadline = time.time() + timeout
        regex = re.compile(pattern.encode() if isinstance(pattern, str) else pattern)
        while time.time() < deadline:
            plain = ANSI.sub(b"", self.screen).replace(b"\r", b"")
            m = regex.search(plain)
            if m:
                self.screen = b""
                return plain.decode("utf-8", "replace")
            r, _, _ = select.select([self.fd], [], [], 0.1)
            if r:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:
                    break
                if not data:
                    break
                self.screen += data
        raise AssertionError("timed out waiting for %r; screen so far:\n%s" % (
            pattern, ANSI.sub(b"", self.screen).replace(b"\r", b"").decode("utf-8", "replace")))

    def send(self, keys):
        os.write(self.fd, keys.encode() if isinstance(keys, str) else keys)

    def wait(self):
        _, status = os.waitpid(self.pid, 0)
        return os.waitstatus_to_exitcode(status)


def main():
    profsh, tests_dir = os.path.abspath(sys.argv[1]), sys.argv[2]
    home = tempfile.mkdtemp(prefix="profsh_pty_")
    try:
        return session(profsh, tests_dir, home) or terminal_interrupts_a_run(profsh, home)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def session(profsh, tests_dir, home):
    s = Session(profsh, tests_dir, home)
    steps = []

    def step(name, fn):
        fn()
        steps.append(name)
        print("ok   " + name)

    step("banner and prompt", lambda: s.read_until(r"profsh> $"))

    def evaluate():
        s.send("x = 40 + 2\r")
        s.read_until(r"profsh> $")
        s.send("x\r")
        s.read_until(r"\n42\n.*profsh> $")
    step("evaluates expressions", evaluate)

    def complete_global_field():
        s.send("profsh.lo\t")
        s.read_until(r"profsh> profsh\.load")
        s.send("\x15")  # Ctrl-U clears the line
        s.read_until(r"profsh> $")
    step("Tab completes a module field", complete_global_field)

    def complete_method():
        s.send('t = profsh.load("golden/cases/resnet18_legacy_export/legacy.json")\r')
        s.read_until(r"profsh> $")
        s.send("t:key_av\t")
        s.read_until(r"profsh> t:key_averages")
        s.send("():table{row_limit=1}\r")
        s.read_until(r"Self CPU time total: .*\n.*profsh> $")
    step("Tab completes a method of a profsh object", complete_method)

    def list_candidates():
        s.send("t:ex\t\t")
        s.read_until(r"export_chrome_trace\s+export_speedscope\s+export_stacks")
        s.send("\x15")
        s.read_until(r"profsh> $")
    step("double Tab lists the candidates", list_candidates)

    def history():
        s.send("\x1b[A\x1b[A\x1b[A")  # three lines back: "x"
        s.read_until(r"profsh> x$")
        s.send("\r")
        s.read_until(r"\n42\n.*profsh> $")
    step("Up arrow recalls history", history)

    def editing():
        s.send("1 + 1")
        s.send("\x01")  # Ctrl-A: start of line
        s.send("10")
        s.send("\x05")  # Ctrl-E: end of line
        s.send("\x1b[D\x7f")  # Left, then Backspace removes the space before the last 1
        s.send("\r")
        s.read_until(r"\n102\n.*profsh> $")
    step("cursor movement and deletion", editing)

    def cancel_line():
        s.send("this is not lua\x03")
        s.read_until(r"\^C\nprofsh> $")
    step("Ctrl-C abandons the line being typed", cancel_line)

    def interrupt_chunk():
        s.send("while true do end\r")
        time.sleep(0.5)
        s.send("\x03")
        s.read_until(r"interrupted!.*\n.*profsh> $")
        s.send("x\r")
        s.read_until(r"\n42\n.*profsh> $")
    step("Ctrl-C interrupts a running chunk and keeps the session", interrupt_chunk)

    def multiline():
        s.send("function f(a)\r")
        s.read_until(r">> $")
        s.send("return a * 3 end\r")
        s.read_until(r"profsh> $")
        s.send("f(5)\r")
        s.read_until(r"\n15\n.*profsh> $")
    step("incomplete chunks continue on the next line", multiline)

    def errors_do_not_end():
        s.send("error('boom')\r")
        s.read_until(r"boom.*\n.*profsh> $")
    step("errors do not end the REPL", errors_do_not_end)

    def complete_profile_method():
        s.send("p = profsh.profile{}\r")
        s.read_until(r"profsh> $")
        s.send("p:export_ch\t")
        s.read_until(r"profsh> p:export_chrome_trace")
        s.send("\x15")
        s.read_until(r"profsh> $")
    step("Tab completes a Trace method on a profile", complete_profile_method)

    def complete_through_a_missing_trace():
        # A profile that ran without recording a window has no trace to read fields from:
        # completing through one finds nothing instead of ending the REPL.
        s.send("q = profsh.profile{schedule=profsh.schedule{wait=5, warmup=1}}; q:start(); q:stop()\r")
        s.read_until(r"profsh> $")
        s.send("q.not_a_field_of_anything.x\t")
        time.sleep(0.3)
        s.send("\x15")
        s.read_until(r"profsh> $")
        s.send("x\r")
        s.read_until(r"\n42\n.*profsh> $")
    step("Tab through a profile without a trace keeps the session", complete_through_a_missing_trace)

    def leave():
        s.send("\x04")
        code = s.wait()
        assert code == 0, "exit status %d" % code
    step("Ctrl-D exits with status 0", leave)

    with open(os.path.join(home, "history")) as f:
        saved = f.read().splitlines()
    assert "x = 40 + 2" in saved and "f(5)" in saved, saved
    print("ok   history file written")
    print("pty session: %d steps passed" % (len(steps) + 1))
    return 0


def terminal_interrupts_a_run(profsh, home):
    """Ctrl-C typed at the terminal during `profsh run` reaches the whole foreground job: profsh
    says the workload got it from the terminal (not that profsh passed it on), and names the
    process whose stream was cut and why (Python ends itself with SIGINT after a
    KeyboardInterrupt, past the collector's exit handlers)."""
    script = "import time;print('ready',flush=1);time.sleep(60)"
    s = Session(profsh, home, home, ["run", "--activities", "nvtx", "--no-table", "-o", "ctrl_c.profsh",
                                     "--", "/usr/bin/python3", "-c", script])
    s.read_until(r"ready\n")
    time.sleep(0.3)
    s.send("\x03")
    screen = s.read_until(r"trace saved to ctrl_c\.profsh", timeout=30)
    code = s.wait()
    pid = re.search(r"python3 \(pid (\d+)\)", screen)
    assert pid, screen
    said = "profsh: SIGINT from the terminal went to /usr/bin/python3 (pid %s) and to profsh; " \
           "/usr/bin/python3 then ended" % pid.group(1)
    assert said in screen and "passed on" not in screen, screen
    print("ok   Ctrl-C at the terminal is said to come from the terminal")
    cut = "1 process did not finish its stream: %s (/usr/bin/python3 -c %s) killed by SIGINT" % (pid.group(1), script)
    assert cut in screen, screen
    print("ok   the process whose stream was cut is named, with the signal that ended it")
    assert code == 130, "exit status %d" % code
    print("ok   profsh exits as the workload did (130)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except AssertionError as e:
        print("FAIL", e)
        sys.exit(1)

