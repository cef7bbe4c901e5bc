#!/usr/bin/env python3
"""profsh serve end to end: a LOGDIR laid out as tensorboard_trace_handler writes it, served on a
free port and driven over HTTP and through headless Chromium. Checks the index, a trace's page,
the timeline's level-of-detail JSON, downloads, a trace written while serving, a file changed
while serving, a run's distributed view (its workers' figures as t:distributed_summary() gives
them), path traversal refused, malformed requests answered 4xx, 100 concurrent requests,
screenshots not blank, the trace cache's bound (--cache-mb: the least recently used dropped), and
profsh.serve from Lua.

usage: check_serve.py PROFSH SOURCE_DIR"""
import concurrent.futures
import csv
import json
import re
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "report"))
from check_report import chromium_args, png_pixels  # noqa: E402

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def start(cmd):
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if "http://" not in line:
        proc.kill()
        raise SystemExit("the server did not say where it listens: %r %r" % (line, proc.stderr.read()))
    return proc, line.strip().split(" at ")[-1]


def get(url, path):
    try:
        with urllib.request.urlopen(url.rstrip("/") + path, timeout=60) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def raw(url, data):
    """Sends bytes as they are (no client-side normalisation) and returns the status code."""
    host, port = urllib.parse.urlparse(url).netloc.split(":")
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(data)
        reply = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            reply += chunk
    return int(reply.split(b" ", 2)[1]) if reply.startswith(b"HTTP/1.1 ") else -1


def quoted(path):
    return urllib.parse.quote(path, safe="/")


def stop(proc, what):
    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        rc = "hung"
    check(rc == 0, "%s stops on SIGTERM with status 0 (got %s)" % (what, rc))


def table_rows(page, section):
    """The cells of a view's table on a page, row by row (the header row left out)."""
    body = page.decode().split('<section class="view" id="%s">' % section)[1].split("</section>")[0]
    return [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", body)
            if "<td>" in row]


def distributed_checks(profsh, url, logdir, source, work):
    """A run of two workers (tests/tensorboard/runs/gloo_two_ranks_torch26): the index lists its
    distributed view, whose figures are t:distributed_summary()'s of the same traces."""
    runs = os.path.join(source, "tests", "tensorboard", "runs", "gloo_two_ranks_torch26")
    shutil.copytree(runs, os.path.join(logdir, "dist"))
    status, body = get(url, "/")
    check(status == 200 and b'href="/distributed?run=dist"' in body and b"(2 workers)" in body,
          "the index lists the run's distributed view and its two workers")
    status, page = get(url, "/distributed?run=dist")
    check(status == 200 and b'id="distributed-steps"' in page and b'id="distributed-ops"' in page,
          "the distributed page shows the per-step and per-collective tables (%d)" % status)
    out = os.path.join(work, "distributed")
    os.makedirs(out)
    r = subprocess.run([profsh, os.path.join(source, "tests", "tensorboard", "dump_distributed.lua"), runs, out,
                        "ranks"], capture_output=True, text=True, timeout=120)
    want_steps = list(csv.reader(open(os.path.join(out, "distributed_steps.csv"))))[1:] if r.returncode == 0 else []
    want_ops = list(csv.reader(open(os.path.join(out, "distributed_ops.csv"))))[1:] if r.returncode == 0 else []
    if status == 200:
        check(want_steps and table_rows(page, "distributed-steps") == want_steps,
              "the page's %d worker x step rows are t:distributed_summary()'s (%d)"
              % (len(table_rows(page, "distributed-steps")), len(want_steps)))
        check(want_ops and table_rows(page, "distributed-ops") == want_ops,
              "the page's collective rows are t:distributed_summary().ops' (%d)" % len(want_ops))
    status, body = get(url, "/trace?path=" + quoted("dist/worker0.pt.trace.json.gz"))
    check(b'href="/distributed?run=dist"' in body, "a worker's page links its run's distributed view")
    for target, want in (("/distributed", 400), ("/distributed?run=nothing", 404),
                         ("/distributed?run=dist&span=9", 404)):
        status, body = get(url, target)
        check(status == want, "%s -> %d (got %d: %s)" % (target, want, status, body[:80]))


def cache_checks(profsh, source, work):
    """profsh serve --cache-mb: three traces of one size, room for two and a half: the least
    recently used goes, and comes back loaded again."""
    logdir = os.path.join(work, "cache_logdir")
    os.makedirs(os.path.join(logdir, "run"))
    runs = os.path.join(source, "tests", "tensorboard", "runs", "gloo_two_ranks_torch26")
    for name in ("a", "b", "c"):
        shutil.copy(os.path.join(runs, "worker0.pt.trace.json.gz"), os.path.join(logdir, "run", name + ".pt.trace.json.gz"))
    r = subprocess.run([profsh, "serve", logdir, "--cache-mb", "lots"], capture_output=True, text=True, timeout=30)
    check(r.returncode == 2 and "--cache-mb" in r.stderr, "--cache-mb lots: usage error, status 2")
    proc, url = start([profsh, "serve", logdir, "--port", "0"])
    try:
        get(url, "/api/timeline?path=run/a.pt.trace.json.gz&width=10")
        usage = json.loads(get(url, "/api/cache")[1])
        meminfo = dict(l.split(":") for l in open("/proc/meminfo"))
        half = int(meminfo["MemTotal"].split()[0]) * 1024 // 2
        check(abs(usage["max_bytes"] - half) < 1 << 20,
              "the default bound is half the machine's memory (%d, %d)" % (usage["max_bytes"], half))
        one = usage["bytes"]
    finally:
        stop(proc, "profsh serve")
    mb = 2.5 * one / (1 << 20)
    proc, url = start([profsh, "serve", logdir, "--port", "0", "--cache-mb", "%.6f" % mb])
    try:
        kept = lambda: [k["path"][len("run/"):-len(".pt.trace.json.gz")]
                        for k in json.loads(get(url, "/api/cache")[1])["kept"]]
        for name in ("a", "b", "c"):
            get(url, "/api/timeline?path=run/%s.pt.trace.json.gz&width=10" % name)
        usage = json.loads(get(url, "/api/cache")[1])
        check(kept() == ["c", "b"] and usage["evictions"] == 1 and usage["bytes"] <= usage["max_bytes"],
              "--cache-mb for two and a half traces: a, the least recently used, is dropped (kept %s, %s)"
              % (kept(), usage))
        get(url, "/api/timeline?path=run/b.pt.trace.json.gz&width=10")
        status, _ = get(url, "/trace?path=run/a.pt.trace.json.gz")
        usage = json.loads(get(url, "/api/cache")[1])
        check(status == 200 and kept()[0] == "a" and "c" not in kept() and usage["loads"] == 4,
              "b used again, a asked for: a is loaded again and c goes (kept %s, %d loads)"
              % (kept(), usage["loads"]))
    finally:
        stop(proc, "profsh serve --cache-mb")


def write_kineto_json(path, steps):
    """A Kineto-shaped JSON trace: per step, operators with shapes and external ids launching
    kernels with correlation ids (arguments in every event, a few names per step unique)."""
    with open(path, "w") as f:
        f.write('{"schemaVersion": 1, "traceEvents": [\n')
        f.write('{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}}')
        corr = 0
        for s in range(steps):
            t = s * 4000
            f.write(',\n{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d", "pid": 1, '
                    '"tid": 1, "ts": %d, "dur": 3900}' % (s, t))
            for k in range(100):
                corr += 1
                t0 = t + 10 + k * 38
                f.write(',\n{"ph": "X", "cat": "cpu_op", "name": "aten::op%d", "pid": 1, "tid": 1, '
                        '"ts": %d, "dur": 30, "args": {"External id": %d, "Input Dims": [[%d, 64], []], '
                        '"Input type": ["float", ""]}}' % (k % 23, t0, corr, k + s % 7, ) +
                        ',\n{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, '
                        '"tid": 1, "ts": %d, "dur": 5, "args": {"correlation": %d, "External id": %d}}'
                        % (t0 + 2, corr, corr) +
                        ',\n{"ph": "X", "cat": "kernel", "name": "kernel_%d_%d", "pid": 0, "tid": 7, '
                        '"ts": %d, "dur": 20, "args": {"correlation": %d, "device": 0, "stream": 7, '
                        '"grid": [%d, 1, 1]}}' % (k % 31, s if k == 0 else 0, t0 + 8, corr, k))
        f.write('\n]}\n')


def rss_anon_kb(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("RssAnon:"):
            return int(line.split()[1])
    return 0


def memory_checks(profsh, work):
    """What the trace cache counts for a JSON trace (/api/cache, LoadedTrace::MemoryBytes) is what
    loading it adds to the server's resident memory, from 0.8 to 1.5 times it (the count rounds
    each large column up to a whole huge page): not the capacity the importer reserved from the
    file's size (which counted it twice over and more)."""
    if os.environ.get("PROFSH_SANITIZED") == "1":
        print("skip the resident memory check under ASan (its allocator's memory is most of profsh's)")
        return
    logdir = os.path.join(work, "memory_logdir")
    os.makedirs(os.path.join(logdir, "run"))
    write_kineto_json(os.path.join(logdir, "run", "small.1.pt.trace.json"), 20)
    big = os.path.join(logdir, "run", "big.1.pt.trace.json")
    write_kineto_json(big, 4000)
    proc, url = start([profsh, "serve", logdir, "--port", "0", "--threads", "1"])
    try:
        # A small trace first: the server's own first-use memory (its thread, the loader's
        # tables) is then in the baseline.
        get(url, "/api/timeline?path=run/small.1.pt.trace.json&width=10")
        before_kb, before = rss_anon_kb(proc.pid), json.loads(get(url, "/api/cache")[1])["bytes"]
        status, _ = get(url, "/api/timeline?path=run/big.1.pt.trace.json&width=10")
        after_kb, usage = rss_anon_kb(proc.pid), json.loads(get(url, "/api/cache")[1])
        counted = usage["bytes"] - before
        grown = (after_kb - before_kb) * 1024
        big_bytes = [k["bytes"] for k in usage["kept"] if k["path"] == "run/big.1.pt.trace.json"]
        check(status == 200 and big_bytes == [counted] and grown > 0 and 0.8 * grown <= counted <= 1.5 * grown,
              "a %.0f MB JSON trace: the cache counts %.1f MB, the server grew by %.1f MB (RssAnon; "
              "from 0.8 to 1.5 times)" % (os.path.getsize(big) / 1e6, counted / 1e6, grown / 1e6))
    finally:
        stop(proc, "profsh serve (memory)")


def browser_checks(url, rel, work):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        print("skip the browser checks: chromium is not installed")
        return
    # Through the index to a trace's page and its timeline, as a user clicks.
    dom = subprocess.run(chromium_args(browser, work) + ["--dump-dom", url], capture_output=True,
                         text=True, timeout=120).stdout
    check('class="views"' in dom and quoted(rel) in dom, "Chromium: the index links the trace's views")
    dom = subprocess.run(chromium_args(browser, work) + ["--dump-dom", url + "trace?path=" + quoted(rel)],
                         capture_output=True, text=True, timeout=120).stdout
    check('id="operators"' in dom and "Self CPU" in dom and 'id="kernels"' in dom and 'id="overview"' in dom,
          "Chromium: the trace's page shows its views")
    dom = subprocess.run(chromium_args(browser, work) + ["--dump-dom", url + "timeline?path=" + quoted(rel)],
                         capture_output=True, text=True, timeout=120).stdout
    drawn = dom.split('data-drawn="')[1].split('"')[0] if 'data-drawn="' in dom else "0"
    check(int(drawn) > 0, "Chromium: the timeline fetched its range and drew %s slices and blocks" % drawn)
    dom = subprocess.run(chromium_args(browser, work) + ["--dump-dom", url + "distributed?run=dist"],
                         capture_output=True, text=True, timeout=120).stdout
    check('id="distributed-steps"' in dom and ">worker1<" in dom and "gloo:all_reduce" in dom,
          "Chromium: the run's distributed view renders its workers and collectives")
    for page, name in (("trace?path=", "overview"), ("timeline?path=", "timeline")):
        shot = os.path.join(work, name + ".png")
        subprocess.run(chromium_args(browser, work) + ["--window-size=800,600", "--screenshot=" + shot,
                                                      url + page + quoted(rel)],
                       capture_output=True, text=True, timeout=120)
        if not os.path.exists(shot):
            check(False, name + ": a screenshot was taken")
            continue
        _, _, rows = png_pixels(shot)
        pixels = [p for row in rows for p in row]
        coloured = sum(1 for p in pixels if max(p) - min(p) > 40)
        drawn_px = sum(1 for p in pixels if min(p) < 235)
        check(drawn_px > 0.02 * len(pixels) and coloured > 500,
              "%s: the screenshot is not blank (%d of %d pixels drawn, %d coloured)"
              % (name, drawn_px, len(pixels), coloured))


def main():
    profsh, source = sys.argv[1], sys.argv[2]
    data = os.path.join(source, "tests", "data", "kineto")
    work = tempfile.mkdtemp(prefix="profsh-serve-")
    logdir = os.path.join(work, "logdir")
    os.makedirs(os.path.join(logdir, "run1"))
    rel = "run1/host_17.1694039959000000000.pt.trace.json.gz"
    shutil.copy(os.path.join(data, "critical_path_simple_add_benchmark_result_493459_1694039959_trace.json.gz"),
                os.path.join(logdir, rel))
    outside = os.path.join(work, "secret.pt.trace.json")
    open(outside, "w").write('{"traceEvents": []}')
    os.symlink(outside, os.path.join(logdir, "run1", "link_out.1.pt.trace.json"))

    r = subprocess.run([profsh, "serve"], capture_output=True, text=True)
    check(r.returncode == 2 and "LOGDIR" in r.stderr, "profsh serve without LOGDIR: usage error, status 2")
    r = subprocess.run([profsh, "serve", os.path.join(work, "nowhere"), "--port", "0"],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 1 and "not a folder" in r.stderr, "profsh serve on a missing folder: status 1, says why")
    r = subprocess.run([profsh, "serve", logdir, "--host", "localhost", "--port", "0"],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 1 and "numeric IPv4" in r.stderr, "profsh serve --host localhost: status 1, says why")

    proc, url = start([profsh, "serve", logdir, "--port", "0"])
    check(url.startswith("http://127.0.0.1:") and not url.endswith(":0/"),
          "--port 0 prints the loopback URL with the chosen port (%s)" % url)
    try:
        status, body = get(url, "/")
        check(status == 200 and b"run1" in body and b"host_17" in body and b"1694039959000000000" in body,
              "the index lists run -> worker -> span")
        runs = json.loads(get(url, "/api/runs")[1])
        paths = [t["path"] for run in runs["runs"] for t in run["traces"]]
        check(paths == [rel], "/api/runs lists the trace and not the symbolic link out (%s)" % paths)

        status, body = get(url, "/trace?path=" + quoted(rel))
        check(status == 200 and b"Self CPU %" in body and b"aten::" in body,
              "the trace's page shows its operator table")
        views = [v for v in ("overview", "gpu", "recommendations", "operators", "kernels", "memory", "modules")
                 if ('<section class="view" id="%s">' % v).encode() in body]
        check(len(views) == 7 and b"<th>kernel</th>" in body and b"<th>calls</th>" in body,
              "the trace's page shows every TensorBoard view (%s)" % views)
        begin_end = json.loads(get(url, "/api/timeline?path=%s&width=20000" % quoted(rel))[1])
        fine = sum(len(l["slices"]) for l in begin_end["lanes"])
        coarse_doc = json.loads(get(url, "/api/timeline?path=%s&width=4" % quoted(rel))[1])
        coarse_slices = sum(len(l["slices"]) for l in coarse_doc["lanes"])
        coarse_blocks = sum(b[3] for l in coarse_doc["lanes"] for b in l["blocks"])
        check(fine > 0 and coarse_slices < fine and coarse_blocks > 0 and coarse_slices + coarse_blocks >= fine,
              "the timeline merges slices narrower than a pixel into blocks (%d slices at 20000 px; "
              "%d slices + %d in blocks at 4 px)" % (fine, coarse_slices, coarse_blocks))
        px = coarse_doc["ns_per_px"]
        widest = max(b[1] for l in coarse_doc["lanes"] for b in l["blocks"])
        check(widest < 2 * px, "a summary block stays about a pixel wide (widest %d ns, a pixel %d ns)"
              % (widest, px))
        t0, t1 = begin_end["begin"], begin_end["end"]
        mid = (t0 + t1) // 2
        zoomed = json.loads(get(url, "/api/timeline?path=%s&t0=%d&t1=%d&width=800"
                                % (quoted(rel), mid, mid + (t1 - t0) // 50))[1])
        check(zoomed["scanned"] < begin_end["scanned"] and all(
            s[0] < mid + (t1 - t0) // 50 and s[0] + s[1] >= mid for l in zoomed["lanes"] for s in l["slices"]),
            "a zoomed request scans and returns only the range asked (%d of %d events scanned)"
            % (zoomed["scanned"], begin_end["scanned"]))
        status, body = get(url, "/download?path=" + quoted(rel))
        check(status == 200 and body == open(os.path.join(logdir, rel), "rb").read(),
              "the download link gives the trace file byte for byte")

        # A trace written while serving appears; a trace rewritten is read again.
        os.makedirs(os.path.join(logdir, "run2"))
        new = "run2/host_18.1700000000000000000.pt.trace.json.gz"
        shutil.copy(os.path.join(data, "cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"),
                    os.path.join(logdir, new))
        status, body = get(url, "/")
        check(b"run2" in body and b"host_18" in body, "a trace written into LOGDIR while serving appears")
        before = get(url, "/trace?path=" + quoted(new))[1]
        shutil.copy(os.path.join(data, "critical_path_cuda_event_sync_event_sync_trace.json.gz"),
                    os.path.join(logdir, new))
        os.utime(os.path.join(logdir, new), (time.time() + 5, time.time() + 5))
        after = get(url, "/trace?path=" + quoted(new))[1]
        count = lambda page: page.split(b"events: <b>")[1].split(b"<")[0]
        check(count(before) != count(after), "a trace file that changed is loaded again (%s -> %s events)"
              % (count(before).decode(), count(after).decode()))

        distributed_checks(profsh, url, logdir, source, work)

        # Path traversal, every spelling: refused, and nothing outside LOGDIR is sent.
        for target, want in (("/download?path=../secret.pt.trace.json", 403),
                             ("/download?path=%2e%2e/secret.pt.trace.json", 403),
                             ("/download?path=%2E%2E%2Fsecret.pt.trace.json", 403),
                             ("/download?path=run1/../../secret.pt.trace.json", 403),
                             ("/download?path=/etc/passwd", 403),
                             ("/download?path=%2Fetc%2Fpasswd", 403),
                             ("/download?path=run1/link_out.1.pt.trace.json", 403),
                             ("/trace?path=run1/link_out.1.pt.trace.json", 403),
                             ("/download?path=run1/nothing.pt.trace.json", 404),
                             ("/../secret.pt.trace.json", 404),
                             ("/%2e%2e/%2e%2e/etc/passwd", 404)):
            status = raw(url, b"GET " + target.encode() + b" HTTP/1.1\r\nHost: x\r\n\r\n")
            check(status == want, "path traversal %s -> %d (got %d)" % (target, want, status))

        # Malformed requests: a clear 4xx each, and the server keeps answering.
        for request, want in ((b"GARBAGE\r\n\r\n", 400), (b"GET / HTTP/9.9\r\n\r\n", 505),
                              (b"POST / HTTP/1.1\r\n\r\n", 405), (b"GET /trace?path=%zz HTTP/1.1\r\n\r\n", 400),
                              (b"GET nopath HTTP/1.1\r\n\r\n", 400), (b"GET / HTTP/1.1\r\nno colon\r\n\r\n", 400),
                              (b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n", 414),
                              (b"GET / HTTP/1.1\r\nX: " + b"a" * 20000 + b"\r\n\r\n", 431),
                              (b"GET /trace HTTP/1.1\r\n\r\n", 400),
                              (("GET /api/timeline?path=%s&width=abc HTTP/1.1\r\n\r\n" % quoted(rel)).encode(), 400),
                              (("GET /api/timeline?path=%s&t0=1x HTTP/1.1\r\n\r\n" % quoted(rel)).encode(), 400),
                              (b"GET /nothing HTTP/1.1\r\n\r\n", 404)):
            status = raw(url, request)
            check(status == want, "malformed %r... -> %d (got %d)" % (request[:40], want, status))
        bad = os.path.join(logdir, "run1", "broken.1.pt.trace.json")
        open(bad, "w").write("this is no trace")
        status, body = get(url, "/trace?path=run1/broken.1.pt.trace.json")
        check(status == 422 and b"broken.1.pt.trace.json" in body,
              "a trace that does not parse: 422 naming the file (%d %r)" % (status, body[:120]))
        os.unlink(bad)

        # 100 requests at once, all answered.
        paths = ["/", "/api/runs", "/trace?path=" + quoted(rel),
                 "/api/timeline?path=%s&width=500" % quoted(rel)] * 25
        with concurrent.futures.ThreadPoolExecutor(100) as pool:
            statuses = list(pool.map(lambda p: get(url, p)[0], paths))
        check(statuses.count(200) == 100, "100 concurrent requests answered 200 (%d were)" % statuses.count(200))

        browser_checks(url, rel, work)
    finally:
        stop(proc, "profsh serve")

    cache_checks(profsh, source, work)
    memory_checks(profsh, work)

    # From Lua, as a recipe starts it.
    lua, lua_url = start([profsh, "-e", "profsh.serve(%r, {port = 0})" % logdir])
    try:
        status, body = get(lua_url, "/")
        check(status == 200 and b"run2" in body, "profsh.serve(dir, {port = 0}) serves the folder")
    finally:
        stop(lua, "profsh.serve")

    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("all profsh serve checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
