#!/usr/bin/env python3
"""profsh serve on a large synthetic trace, the way a user meets it: the index, then the first
page of the trace (the timeline page: the load and the timeline's index), its whole range and
zoomed timeline requests, then the trace's views page (every view computed once), the server's
memory (VmHWM: its peak; VmRSS at the end; what its trace cache accounts for) at each stage.

The trace is written by gen_kineto_trace into a fresh folder under /tmp (TMPDIR) and deleted at
the end, whatever happens, unless WORKDIR is given (then it is kept and reused). SIZE_MB is in
MiB (5000 for the issue's 5 GB; CI-sized runs use a few MB).

usage: serve_bench.py PROFSH GEN_KINETO_TRACE SIZE_MB [WORKDIR]
  GEN_KINETO_TRACE: bench/gen_kineto_trace of the same build (cmake --build build --target
  gen_kineto_trace)."""
import json
import os
import re
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


def proc_status_mb(pid, field):
    for line in open("/proc/%d/status" % pid):
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def memory(pid):
    return "VmHWM %.0f MB, VmRSS %.0f MB" % (proc_status_mb(pid, "VmHWM"), proc_status_mb(pid, "VmRSS"))


def main():
    profsh, gen, size_mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
    keep = len(sys.argv) > 4
    work = sys.argv[4] if keep else tempfile.mkdtemp(prefix="profsh-serve-bench-")
    proc = None
    try:
        run = os.path.join(work, "logdir", "run")
        os.makedirs(run, exist_ok=True)
        trace = os.path.join(run, "worker0.1.pt.trace.json")
        if not os.path.exists(trace) or os.path.getsize(trace) < size_mb * (1 << 20) * 0.9:
            start = time.monotonic()
            subprocess.run([gen, trace, str(size_mb)], check=True, stdout=subprocess.DEVNULL)
            print("generated in %.1f s" % (time.monotonic() - start))
        print("trace: %s, %.2f GB (%.0f MiB)" % (trace, os.path.getsize(trace) / 1e9,
                                                 os.path.getsize(trace) / (1 << 20)))
        proc = subprocess.Popen([profsh, "serve", os.path.join(work, "logdir"), "--port", "0"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        url = proc.stdout.readline().strip().split(" at ")[-1]
        rel = "run/worker0.1.pt.trace.json"
        print("server at start:                 %s" % memory(proc.pid))
        t, status, _ = timed_get(url)
        print("index:                         %7.3f s (status %d)" % (t, status))
        t, status, body = timed_get(url + "timeline?path=" + rel)
        print("first page (timeline: load + timeline index): %7.3f s (status %d)" % (t, status))
        cache = json.loads(timed_get(url + "api/cache")[2])
        print("  server after it:               %s; the cache accounts for %.0f MB"
              % (memory(proc.pid), cache["bytes"] / (1 << 20)))
        t, status, body = timed_get(url + "api/timeline?path=%s&width=1500" % rel)
        whole = json.loads(body)
        print("whole-range timeline request:  %7.3f s, %d events walked, %.1f kB sent"
              % (t, whole["scanned"], len(body) / 1e3))
        t0, t1 = whole["begin"], whole["end"]
        for fraction in (100, 10000, 1000000):
            mid, span = (t0 + t1) // 2, max(1000, (t1 - t0) // fraction)
            t, status, body = timed_get(url + "api/timeline?path=%s&t0=%d&t1=%d&width=1500"
                                        % (rel, mid, mid + span))
            zoomed = json.loads(body)
            drawn = sum(len(l["slices"]) for l in zoomed["lanes"])
            print("zoomed to 1/%-8d (%9.3f ms): %7.3f s, %d events walked, %d slices, %.1f kB sent"
                  % (fraction, span / 1e6, t, zoomed["scanned"], drawn, len(body) / 1e3))
        t, status, body = timed_get(url + "trace?path=" + rel)
        loaded = re.search(rb"loaded in: <b>([0-9.]+) s", body)
        events = re.search(rb"events: <b>([0-9]+)", body)
        print("views page (every view, trace cached): %7.3f s (status %d; %s events, loaded in %s s)"
              % (t, status, events.group(1).decode() if events else "?",
                 loaded.group(1).decode() if loaded else "?"))
        t, status, _ = timed_get(url + "trace?path=" + rel)
        print("views page again:              %7.3f s" % t)
        cache = json.loads(timed_get(url + "api/cache")[2])
        print("trace cache accounts for:        %.0f MB (bound %.0f MB)"
              % (cache["bytes"] / (1 << 20), cache["max_bytes"] / (1 << 20)))
        print("server at the end:               %s" % memory(proc.pid))
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=120)
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
