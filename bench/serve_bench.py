#!/usr/bin/env python3
"""profsh serve on a large synthetic trace: time to the first page (the trace's views, load
included), the timeline page, a whole-range and a zoomed timeline request, and the server's peak
memory (VmHWM). SIZE_MB is the trace's size (the issue's goal is 5000; CI uses a few MB).

usage: serve_bench.py PROFSH GEN_KINETO_TRACE SIZE_MB [WORKDIR]
  GEN_KINETO_TRACE: bench/gen_kineto_trace of the same build (cmake --build build --target
  gen_kineto_trace)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request


def timed_get(url):
    start = time.monotonic()
    with urllib.request.urlopen(url, timeout=3600) as r:
        body = r.read()
        status = r.status
    return time.monotonic() - start, status, body


def peak_rss_mb(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main():
    profsh, gen, size_mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
    work = sys.argv[4] if len(sys.argv) > 4 else tempfile.mkdtemp(prefix="profsh-serve-bench-")
    run = os.path.join(work, "logdir", "run")
    os.makedirs(run, exist_ok=True)
    trace = os.path.join(run, "worker0.1.pt.trace.json")
    if not os.path.exists(trace) or os.path.getsize(trace) < size_mb * 1e6 * 0.9:
        subprocess.run([gen, trace, str(size_mb)], check=True, stdout=subprocess.DEVNULL)
    print("trace: %s, %.0f MB" % (trace, os.path.getsize(trace) / 1e6))
    proc = subprocess.Popen([profsh, "serve", os.path.join(work, "logdir"), "--port", "0"],
                            stdout=subprocess.PIPE, text=True)
    url = proc.stdout.readline().strip().split(" at ")[-1]
    rel = "run/worker0.1.pt.trace.json"
    try:
        t, status, _ = timed_get(url)
        print("index:                         %7.3f s (status %d)" % (t, status))
        t, status, _ = timed_get(url + "trace?path=" + rel)
        print("first page (load + views):     %7.3f s (status %d)" % (t, status))
        t, status, _ = timed_get(url + "timeline?path=" + rel)
        print("timeline page (trace cached):  %7.3f s (status %d)" % (t, status))
        t, status, body = timed_get(url + "api/timeline?path=%s&width=1500" % rel)
        whole = json.loads(body)
        print("whole-range timeline request:  %7.3f s, %d events scanned, %.1f kB sent"
              % (t, whole["scanned"], len(body) / 1e3))
        t0, t1 = whole["begin"], whole["end"]
        mid, span = (t0 + t1) // 2, max(1000, (t1 - t0) // 1000)
        t, status, body = timed_get(url + "api/timeline?path=%s&t0=%d&t1=%d&width=1500" % (rel, mid, mid + span))
        zoomed = json.loads(body)
        print("zoomed (1/1000) request:       %7.3f s, %d events scanned, %.1f kB sent"
              % (t, zoomed["scanned"], len(body) / 1e3))
        print("server peak memory (VmHWM):    %7.0f MB" % peak_rss_mb(proc.pid))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    if len(sys.argv) <= 4:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
