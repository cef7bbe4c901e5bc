#!/usr/bin/env python3
"""profsh run --serve end to end: a long job (nvtx_workload's steps under --schedule) whose windows
are served while it runs. Checks the URL is printed before the job starts, windows appear in the
index while the job is still running, a window's views, timeline, download and the processes'
distributed view answer, files beside the windows are not served, nor the windows an earlier run
with the same -o left there (a stale file, and a whole run's real windows), serving stops when the
job ends (and goes on with --keep-serving until SIGTERM, keeping the job's status), and the usage
errors (--port without --serve, --serve without a long job, a port already taken: nothing run).

usage: check_run_serve.py PROFSH NVTX_WORKLOAD"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def get(url, path=""):
    try:
        with urllib.request.urlopen(url.rstrip("/") + path, timeout=60) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


class Run:
    """profsh run in the background; its stderr read as it comes."""

    def __init__(self, cmd, cwd):
        self.proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)
        self.lines = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line)

    def wait_for(self, text, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for line in self.lines:
                if text in line:
                    return line
            if self.proc.poll() is not None and not self.reader.is_alive():
                break
            time.sleep(0.05)
        return None

    def stderr(self):
        return "".join(self.lines)


def refused(url):
    try:
        get(url)
        return False
    except (urllib.error.URLError, ConnectionError):
        return True


def main():
    profsh, workload = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    work = tempfile.mkdtemp(prefix="profsh-run-serve-")
    schedule = ["--activities", "nvtx", "--schedule", "wait=1,warmup=1,active=2", "--step-marker", "^step$",
                "--no-table"]

    r = subprocess.run([profsh, "run", "--port", "0", "--", "true"], capture_output=True, text=True)
    check(r.returncode == 2 and "--port needs --serve" in r.stderr, "--port without --serve: status 2, says why")
    r = subprocess.run([profsh, "run", "--serve", "--", "true"], capture_output=True, text=True)
    check(r.returncode == 2 and "--schedule" in r.stderr,
          "--serve without a long job: status 2, names --schedule (%s)" % r.stderr.strip())
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    r = subprocess.run([profsh, "run", "--serve", "--port", str(port), *schedule, "-o",
                        os.path.join(work, "taken.profsh"), "--", workload, "steps", "4", "10"],
                       capture_output=True, text=True, timeout=60)
    taken.close()
    check(r.returncode == 2 and "nothing was run" in r.stderr and str(port) in r.stderr
          and not [f for f in os.listdir(work) if f.startswith("taken.")],
          "--serve on a port already taken: status 2 before the job starts (%s)" % r.stderr.strip())

    # Beside the windows: files that must not be served.
    open(os.path.join(work, "secret.txt"), "w").write("not a window")
    open(os.path.join(work, "other.1.2.profsh"), "w").write("another run's window")
    os.makedirs(os.path.join(work, "sub"))
    open(os.path.join(work, "sub", "job.1.1.profsh"), "w").write("in a subfolder")
    # A window an earlier run with the same -o left (pid 1: never this run's workload).
    stale = os.path.join(work, "job.1.1.profsh")
    open(stale, "w").write("an earlier run's window")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))

    run = Run([profsh, "run", "--serve", "--port", "0", *schedule, "-o", os.path.join(work, "job.profsh"), "--",
               workload, "steps", "120", "100"], cwd=work)
    try:
        line = run.wait_for("http://", 30)
        check(line is not None and "127.0.0.1" in line, "the URL is printed on loopback (%r)" % line)
        check(run.wait_for("1 window of an earlier run", 5) is not None,
              "says the earlier run's window is left out (%s)" % run.stderr().strip())
        url = line.split(" at ")[1].split(" ")[0] if line else "http://127.0.0.1:1/"
        windows = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(windows) < 2:
            status, body = get(url, "/api/runs")
            windows = [t for r_ in json.loads(body)["runs"] for t in r_["traces"]] if status == 200 else []
            time.sleep(0.2)
        running = run.proc.poll() is None
        check(len(windows) >= 2 and running,
              "windows appear while the job runs (%d listed, job running: %s)" % (len(windows), running))
        check(all(t["path"].startswith("job.") and t["path"].endswith(".profsh") for t in windows)
              and all(t["worker"].isdigit() and t["span"].isdigit() for t in windows),
              "only the run's windows are listed, the pid as worker, the window as span (%s)" % [t["path"] for t in windows])
        check("job.1.1.profsh" not in [t["path"] for t in windows],
              "the earlier run's window job.1.1.profsh is not listed (%s)" % [t["path"] for t in windows])
        first = windows[0]["path"]
        status, body = get(url, "/")
        check(status == 200 and first.encode() in body and b'class="distributed"' in body,
              "the index links the windows and the distributed view")
        status, body = get(url, "/trace?path=" + first)
        check(status == 200 and b"work_" in body and b'id="operators"' in body,
              "a window's page shows its views (its steps' work_ ranges)")
        status, body = get(url, "/api/timeline?path=%s&width=800" % first)
        drawn = sum(len(l["slices"]) + sum(b[3] for b in l["blocks"]) for l in json.loads(body)["lanes"]) \
            if status == 200 else 0
        check(drawn == 4, "a window's timeline holds its two steps' ranges (%d slices and merged)" % drawn)
        status, body = get(url, "/download?path=" + first)
        check(status == 200 and body == open(os.path.join(work, first), "rb").read(),
              "a window downloads byte for byte")
        status, body = get(url, "/distributed?run=job&span=" + windows[0]["span"])
        check(status == 200 and b'id="distributed-steps"' in body and b"1 worker" in body,
              "the distributed view of the run's processes answers (%d)" % status)
        for path in ("secret.txt", "other.1.2.profsh", "sub/job.1.1.profsh", "job.1.1.profsh",
                     "../" + os.path.basename(work)):
            status, _ = get(url, "/download?path=" + path)
            check(status in (403, 404), "%s beside the windows is not served (%d)" % (path, status))
        rc = run.proc.wait(timeout=120)
        check(rc == 0, "the job ends with its status (%d)" % rc)
        time.sleep(0.5)
        check(refused(url), "serving stops when the job ends")
    finally:
        if run.proc.poll() is None:
            run.proc.kill()

    # The same -o BASE again (as .json): the first run's real windows are an earlier run's now.
    earlier = sorted(f for f in os.listdir(work) if f.startswith("job.") and f.endswith(".profsh"))
    keep = Run([profsh, "run", "--serve", "--port", "0", "--keep-serving", *schedule, "-o",
                os.path.join(work, "job.json"), "--", workload, "steps", "12", "20"], cwd=work)
    try:
        line = keep.wait_for("still serving", 120)
        check(line is not None, "--keep-serving: says it still serves after the job (%s)" % keep.stderr()[-300:])
        url = line.split(" at ")[1].split(" ")[0] if line else "http://127.0.0.1:1/"
        status, body = get(url, "/api/runs")
        paths = [t["path"] for r_ in json.loads(body)["runs"] for t in r_["traces"]] if status == 200 else []
        check(keep.proc.poll() is None and len(paths) >= 2 and all(p.endswith(".json") for p in paths),
              "--keep-serving: the finished job's windows (-o job.json: BASE.PID.N.json) are served, "
              "not the %d windows of the run before with the same BASE (%s)" % (len(earlier), paths))
        status, _ = get(url, "/download?path=" + earlier[-1]) if earlier else (0, b"")
        check(len(earlier) >= 3 and status == 404,
              "the run before's window %s is not served (%d)" % (earlier[-1] if earlier else None, status))
        keep.proc.send_signal(signal.SIGTERM)
        rc = keep.proc.wait(timeout=30)
        check(rc == 0, "--keep-serving: SIGTERM stops serving, the status is the job's (%d)" % rc)
    finally:
        if keep.proc.poll() is None:
            keep.proc.kill()

    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("all profsh run --serve checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
