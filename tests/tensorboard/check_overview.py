#!/usr/bin/env python3
"""`profsh overview`: the four tables of the TensorBoard plugin's overview and the
recommendations, as tables and as CSV, equal to the Lua views they print (t:step_breakdown(),
.average, t:gpu_summary(), the first N rows of t:kernel_summary(), t:recommendations()); bad
input gives a message naming the file and a non-zero status.

usage: check_overview.py PROFSH TRACES_DIR
"""
import csv
import io
import os
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def sections(text):
    """{title: rows of the CSV after its "** title:" line}."""
    out, title, lines = {}, None, []
    for line in text.split("\n"):
        if line.startswith("** ") and line.endswith(":"):
            if title is not None:
                out[title] = list(csv.reader(io.StringIO("\n".join(lines).strip())))
            title, lines = line[3:-1], []
        else:
            lines.append(line)
    if title is not None:
        out[title] = list(csv.reader(io.StringIO("\n".join(lines).strip())))
    return out


def main():
    profsh, traces = sys.argv[1], sys.argv[2]
    trace = os.path.join(traces, "critical_path_cuda_event_sync_event_sync_trace.json.gz")
    r = subprocess.run([profsh, "overview", trace, "--format", "csv", "--kernels", "2"],
                       capture_output=True, text=True)
    check(r.returncode == 0, "overview --format csv exits 0 (%s)" % r.stderr.strip()[-200:])
    got = sections(r.stdout)
    titles = ["step time breakdown (us)", "average step time (us)", "GPU summary", "top kernels (us)",
              "recommendations"]
    check(list(got) == titles, "the sections, in order (%s)" % list(got))
    lua = ("local t = profsh.load(arg[1]) "
           "t:step_breakdown():to_csv(arg[2] .. '/0.csv') t:step_breakdown().average:to_csv(arg[2] .. '/1.csv') "
           "t:gpu_summary():to_csv(arg[2] .. '/2.csv') t:kernel_summary():to_csv(arg[2] .. '/3.csv') "
           "t:recommendations():to_csv(arg[2] .. '/4.csv')")
    with tempfile.TemporaryDirectory() as work:
        r2 = subprocess.run([profsh, "-e", lua, "--", trace, work], capture_output=True, text=True)
        check(r2.returncode == 0, "the Lua views run (%s)" % r2.stderr.strip()[-300:])
        want = {}
        for i, title in enumerate(titles):
            path = os.path.join(work, "%d.csv" % i)
            want[title] = list(csv.reader(open(path, encoding="utf-8"))) if os.path.exists(path) else None
    for title in titles:
        expected = want.get(title)
        if title == "top kernels (us)" and expected:
            expected = expected[:3]  # the header and --kernels 2
        check(got.get(title) == expected, "%s equals the Lua view's rows" % title)
    rules = [row[0] for row in got.get("recommendations", [])[1:]]
    check(rules == ["low_gpu_utilization", "pageable_memcpy", "sync_in_step"],
          "the recommendations fired (%s)" % rules)
    r = subprocess.run([profsh, "overview", trace], capture_output=True, text=True)
    check(r.returncode == 0 and "** GPU summary:" in r.stdout and "NVIDIA A100-PG509-200" in r.stdout,
          "the table format prints the same sections")
    bad = os.path.join(traces, "README.md")
    r = subprocess.run([profsh, "overview", bad], capture_output=True, text=True)
    check(r.returncode == 1 and "profsh overview: " + bad in r.stderr and "not a trace" in r.stderr,
          "a file that is no trace: exit 1 naming it (%s)" % r.stderr.strip())
    r = subprocess.run([profsh, "overview", trace, "--format", "xml"], capture_output=True, text=True)
    check(r.returncode == 2 and "unknown format 'xml'" in r.stderr, "a bad format: usage error, exit 2")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
