#!/usr/bin/env python3
"""Per-rank summaries at scale: the map (`profsh summarize`) over RANKS synthetic ranks of SIZE_MB
each, made on the fly one at a time (each trace is deleted once summarized: never all on disk),
then the reduce (profsh.load_summaries) at several job sizes, beside profsh.load_ranks on the
traces themselves.

  - map: per rank, the time to make the trace (not counted), summarize's wall time and peak memory,
    the summary's size; then their median, mean and largest;
  - reduce: at each of REDUCE_RANKS ranks (default 64, 256, 1024, 4096), profsh.load_summaries of
    that many summaries and the job-wide analyses over them (alignment, collectives, per-rank
    breakdowns across ranks), wall time and peak memory. Beyond the ranks mapped, summaries are
    copies of the mapped ones given new ranks (only the rank table and the distributedInfo rank
    differ): the reduce reads only summaries, so what it costs depends on their rows, not on
    where they came from;
  - beside: the same analyses through profsh.load_ranks on LOAD_RANKS traces (default 64; they
    are on disk together for that run only), and the reduce of those ranks' summaries.

The traces come from bench/gen_kineto_trace (seed r+1, rank r, COLLECTIVES all-reduces per step).
Wall time and peak memory are GNU time's %e and %M.

  summaries_bench.py BUILD_DIR [--ranks 1024] [--size-mb 100] [--collectives 4]
                     [--reduce-ranks 64,256,1024,4096] [--load-ranks 64] [--work DIR]
"""
import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

JOB_LUA = r"""
local how, source = arg[1], arg[2]
local job
if how == "summaries" then job = profsh.load_summaries(source) else job = profsh.load_ranks(source) end
local collectives = job:collectives()
local breakdown = job:temporal_breakdown()
local across = breakdown:across_ranks()
print(string.format("job: %d ranks, %d collective calls, %d breakdown rows, %d cross-rank rows",
                    #job.ranks, #collectives, #breakdown, #across))
"""


def measure(argv):
    """(wall seconds, peak MB, stdout+stderr) of a command, from GNU time."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as t:
        p = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", t.name] + argv,
                           capture_output=True, text=True)
        fields = t.read().split()
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s%s" % (p.returncode, " ".join(argv), p.stdout, p.stderr))
    return float(fields[-2]), int(fields[-1]) / 1024.0, p.stdout + p.stderr


def make_trace(build, path, size_mb, rank, collectives):
    subprocess.run([os.path.join(build, "bench", "gen_kineto_trace"), path, str(size_mb),
                    str(rank + 1), str(rank), str(collectives)], check=True,
                   stderr=subprocess.DEVNULL)


def summary_name(rank):
    return "rank-%d.summary.sqlite" % rank


def copy_with_rank(src, dst, rank):
    """A copy of a summary that says it is rank `rank`."""
    shutil.copyfile(src, dst)
    db = sqlite3.connect(dst)
    try:
        info = db.execute("SELECT distributed_info FROM rank").fetchone()[0]
        if info:
            d = json.loads(info)
            d["rank"] = rank
            info = json.dumps(d)
        db.execute("UPDATE rank SET rank = ?, path = ?, distributed_info = ?",
                   (rank, "copy-of-%s-as-rank-%d" % (os.path.basename(src), rank), info))
        for key, text in db.execute(
                "SELECT key, json FROM trace_metadata WHERE key = 'distributedInfo'").fetchall():
            d = json.loads(text)
            d["rank"] = rank
            db.execute("UPDATE trace_metadata SET json = ? WHERE key = ?", (json.dumps(d), key))
        db.commit()
    finally:
        db.close()


def run_map(args, profsh, mapped):
    traces = os.path.join(args.work, "trace")
    os.makedirs(traces, exist_ok=True)
    rows = []
    every = max(1, args.ranks // 16)
    print("map: %d ranks x %g MB, %d all-reduces per step, one trace on disk at a time" %
          (args.ranks, args.size_mb, args.collectives))
    for r in range(args.ranks):
        trace = os.path.join(traces, "rank-%d.json" % r)
        start = time.monotonic()
        make_trace(args.build, trace, args.size_mb, r, args.collectives)
        made = time.monotonic() - start
        trace_mb = os.path.getsize(trace) / 2**20
        out = os.path.join(mapped, summary_name(r))
        wall, peak, _ = measure([profsh, "summarize", trace, "-o", out])
        os.unlink(trace)
        size_kb = os.path.getsize(out) / 1024.0
        rows.append((wall, peak, size_kb, trace_mb, made))
        if r % every == 0 or r == args.ranks - 1:
            print("  rank %4d: trace %.1f MB made in %.2f s; summarize %.2f s, %.0f MB peak; "
                  "summary %.0f KB" % (r, trace_mb, made, wall, peak, size_kb), flush=True)
    walls = [x[0] for x in rows]
    peaks = [x[1] for x in rows]
    sizes = [x[2] for x in rows]
    mbs = sum(x[3] for x in rows)
    print("map per rank: summarize median %.2f s, mean %.2f s, max %.2f s (%.0f MB/s); peak "
          "memory median %.0f MB, max %.0f MB" %
          (statistics.median(walls), statistics.mean(walls), max(walls), mbs / sum(walls),
           statistics.median(peaks), max(peaks)))
    print("summary size: median %.0f KB, max %.0f KB, all %d: %.1f MB (traces: %.1f GB)" %
          (statistics.median(sizes), max(sizes), len(sizes), sum(sizes) / 1024, mbs / 1024))
    print("making the traces (not counted above): %.1f s in all" % sum(x[4] for x in rows))


def reduce_folder(args, mapped, n):
    folder = os.path.join(args.work, "reduce-%d" % n)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for r in range(n):
        source = os.path.join(mapped, summary_name(r % args.ranks))
        if r < args.ranks:
            os.link(source, os.path.join(folder, summary_name(r)))
        else:
            copy_with_rank(source, os.path.join(folder, summary_name(r)), r)
    return folder


def run_reduce(args, profsh, job_lua, mapped):
    print("reduce: profsh.load_summaries, collectives, temporal breakdown across ranks")
    for n in args.reduce_ranks:
        folder = reduce_folder(args, mapped, n)
        size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
        wall, peak, out = measure([profsh, job_lua, "summaries", folder])
        line = [l for l in out.splitlines() if l.startswith("job:")]
        print("  %5d ranks (%6.1f MB of summaries): %6.2f s, %6.0f MB peak   %s" %
              (n, size / 2**20, wall, peak, line[-1] if line else ""), flush=True)
        shutil.rmtree(folder)


def run_beside(args, profsh, job_lua, mapped):
    n = args.load_ranks
    traces = os.path.join(args.work, "traces-%d" % n)
    os.makedirs(traces, exist_ok=True)
    for r in range(n):
        make_trace(args.build, os.path.join(traces, "rank-%d.json" % r), args.size_mb, r,
                   args.collectives)
    wall, peak, out = measure([profsh, job_lua, "traces", traces])
    line = [l for l in out.splitlines() if l.startswith("job:")]
    print("beside: profsh.load_ranks of the %d traces: %.2f s, %.0f MB peak   %s" %
          (n, wall, peak, line[-1] if line else ""))
    shutil.rmtree(traces)
    if n <= args.ranks:
        folder = reduce_folder(args, mapped, n)
        wall, peak, out = measure([profsh, job_lua, "summaries", folder])
        line = [l for l in out.splitlines() if l.startswith("job:")]
        print("        profsh.load_summaries of their %d summaries: %.2f s, %.0f MB peak   %s" %
              (n, wall, peak, line[-1] if line else ""))
        shutil.rmtree(folder)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("build")
    p.add_argument("--ranks", type=int, default=1024)
    p.add_argument("--size-mb", type=float, default=100)
    p.add_argument("--collectives", type=int, default=4)
    p.add_argument("--reduce-ranks", default="64,256,1024,4096")
    p.add_argument("--load-ranks", type=int, default=64)
    p.add_argument("--work", default=None)
    args = p.parse_args()
    args.build = os.path.abspath(args.build)
    args.reduce_ranks = [int(x) for x in args.reduce_ranks.split(",") if x]
    profsh = os.path.join(args.build, "profsh")
    own_work = args.work is None
    args.work = args.work or tempfile.mkdtemp(prefix="profsh_summaries_bench_")
    try:
        mapped = os.path.join(args.work, "summaries")
        os.makedirs(mapped, exist_ok=True)
        job_lua = os.path.join(args.work, "job.lua")
        with open(job_lua, "w") as f:
            f.write(JOB_LUA)
        print("%d cores; %s" % (os.cpu_count(), profsh))
        run_map(args, profsh, mapped)
        run_reduce(args, profsh, job_lua, mapped)
        if args.load_ranks:
            run_beside(args, profsh, job_lua, mapped)
    finally:
        if own_work:
            shutil.rmtree(args.work, ignore_errors=True)


if __name__ == "__main__":
    main()
