#!/usr/bin/env python3
"""The critical path across ranks, what-if and the Chrome export's arrows, on the synthetic
two-rank job in tests/critical_path_ranks/data (make_job.py: rank 1 runs a 500 µs
aten::index_put_ before each all-reduce, so rank 0's all-reduce waits for it).

Expected, from the traces' JSON:
  - rank 0's path, linked, crosses to rank 1 and names its aten::index_put_ (500 µs) first among
    the contributors; the all-reduce's time on it is the time after rank 1's kernel started
    (its end less rank 1's start); unlinked, rank 0's own path holds its all-reduce's whole span;
  - removing aten::index_put_ (the only bottleneck) gains at least 450 µs, and the next one
    appears: a GEMM kernel (gpu_compute_bound) heads the contributors and rank 1 is gone;
  - the export has the path's flow events, one of them from rank 1's process to rank 0's;
  - gloo (check_gloo): on a synthetic gloo job (the same late rank, the all-reduce on gloo's
    thread) rank 1's aten::index_put_ heads rank 0's path and rank 0's gloo:all_reduce counts
    only its time after rank 1 arrived; on the real gloo_h200 job the ranks are linked there and
    rank 0's gloo:all_reduce counts its time after rank 1's arrival, not its span;
  - errors: a bad change, a scale < 0, a sync scaled.

Usage: check_critical_path_ranks.py PROFSH DATA_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def lua(profsh, work, code, *args):
    script = os.path.join(work, "q.lua")
    with open(script, "w") as f:
        f.write(code)
    return subprocess.run([profsh, script] + list(args), capture_output=True, text=True)


PATH = r'''
local dir, out = ...
local t = profsh.load_ranks(dir)
local cp = t:critical_path{annotation = "ProfilerStep", instance = 0, rank = 0}
print("duration", cp.duration, cp.rank)
for _, c in ipairs(cp:contributors(0)) do print("contributor", c.rank, c.name, c.bound_by, c.duration) end
for _, e in ipairs(cp:breakdown()) do
  if e.duration > 0 then print("edge", e.rank, e.name, e.type, e.duration, e.bound_by) end
end
local alone = t:critical_path{annotation = "ProfilerStep", instance = 0, rank = 0, link_ranks = false}
for _, c in ipairs(alone:contributors(1)) do print("alone", c.rank, c.name, c.duration) end
local w = cp:whatif{{op = "aten::index_put_", remove = true}}
print("whatif", w.duration, w.baseline, w.gain)
for _, c in ipairs(w:contributors(0)) do print("next", c.rank, c.name, c.bound_by, c.duration) end
local again = w:whatif{{rank = 0, scale = 0.5}}
print("chained", again.duration, #again.changes)
t:export_chrome_trace(out, {critical_path = cp})
'''

ERRORS = r'''
local dir = ...
local t = profsh.load_ranks(dir)
local cp = t:critical_path{annotation = "ProfilerStep", instance = 0}
for _, changes in ipairs{ {{kernel = "x"}}, {{kernel = "x", scale = -1}}, {{sync = "cudaStreamSynchronize", scale = 0.5}},
                          {{kernel = "x", op = "y", scale = 1}}, {{kernel = "[x", scale = 0.5}}, {{colour = 1}}, {} } do
  local ok, err = pcall(cp.whatif, cp, changes)
  print(ok, err)
end
'''


# A gloo job as torch writes it (the structure of gloo_h200): each step's c10d::allreduce_ on the
# calling thread hands the all-reduce to gloo's thread (a gloo:all_reduce user_annotation, which
# HTA's graph leaves out), and the calling thread waits for it before its next operator. Rank 1
# runs a 500 µs aten::index_put_ before the all-reduce, so rank 0's gloo:all_reduce waits for it.
GLOO_LATE_US, GLOO_AFTER_LAST_US = 500, 50


def write_gloo_job(out):
    base = 1_700_000_000_000
    for rank in (0, 1):
        events = [{"ph": "M", "name": "thread_name", "pid": 7, "tid": 2, "args": {"name": "gloo"}}]

        def x(cat, name, tid, ts, dur):
            events.append({"ph": "X", "cat": cat, "name": name, "pid": 7, "tid": tid,
                           "ts": base + ts, "dur": dur, "args": {}})
        for step in (1, 2):
            t = step * 2000
            x("user_annotation", "ProfilerStep#%d" % step, 1, t, 1500)
            x("cpu_op", "aten::mm", 1, t + 10, 100)
            late = GLOO_LATE_US + 10 if rank == 1 else 0
            if rank == 1:
                x("cpu_op", "aten::index_put_", 1, t + 120, GLOO_LATE_US)
            x("cpu_op", "c10d::allreduce_", 1, t + 120 + late, 10)
            gloo_end = t + 140 + GLOO_LATE_US + 10 + GLOO_AFTER_LAST_US
            x("user_annotation", "gloo:all_reduce", 2, t + 140 + late, gloo_end - (t + 140 + late))
            x("cpu_op", "aten::add", 1, gloo_end + 10, 10)
        doc = {"schemaVersion": 1,
               "distributedInfo": {"backend": "gloo", "rank": rank, "world_size": 2},
               "traceEvents": events}
        with open(os.path.join(out, "rank-%d.json" % rank), "w") as f:
            json.dump(doc, f)


def critical_path(profsh, paths):
    return subprocess.run([profsh, "critical-path"] + paths + ["--rank", "0"],
                          capture_output=True, text=True)


def table(stdout, title):
    """The rows of one of critical-path's tables (after the line `title:`), split on spaces."""
    lines = stdout.splitlines()
    if title + ":" not in lines:
        return []
    rows = []
    for line in lines[lines.index(title + ":") + 2:]:
        if not line.strip():
            break
        rows.append(line.split())
    return rows


def check_gloo(profsh, work, real):
    """gloo's collectives, on their own threads, link the ranks: rank 0's path runs through rank
    1's late work, and rank 0's all-reduce counts only its time after rank 1 arrived."""
    synthetic = os.path.join(work, "gloo")
    os.makedirs(synthetic)
    write_gloo_job(synthetic)
    p = critical_path(profsh, [os.path.join(synthetic, "rank-%d.json" % r) for r in (0, 1)])
    check(p.returncode == 0, "critical-path on the synthetic gloo job: " + p.stderr[-300:])
    check("2 ranks linked at 1 collective(s), ending on rank 0" in p.stdout and
          "2 collective range(s) run on a backend's own threads" in p.stdout and
          "2 of them were waited for" in p.stdout and "could not be linked" not in p.stdout,
          "the gloo job's ranks are linked at its all-reduce: " + p.stdout[:300])
    top = table(p.stdout, "top contributors")
    check(top and top[0][:3] == ["1", "aten::index_put_", "cpu_bound"] and
          float(top[0][4]) == GLOO_LATE_US,
          "rank 1's aten::index_put_ heads rank 0's path: %s" % top[:2])
    gloo = [r for r in top if r[1] == "gloo:all_reduce"]
    check(len(gloo) == 1 and gloo[0][0] == "0" and gloo[0][2] == "cpu_communication_bound" and
          float(gloo[0][4]) == GLOO_AFTER_LAST_US,
          "rank 0's gloo:all_reduce counts only its time after rank 1 arrived: %s" % gloo)

    # The real job (recorded on an H200 with torch 2.11, gpu_job.py): rank 1 sleeps 5 ms before
    # each all-reduce; its gloo:all_reduce ranges now join the ranks. The sleep is idle time,
    # which HTA's graph counts 0, so rank 0's recorded work up to the all-reduce is the longer
    # and its path stays on rank 0; what the link changes is its all-reduce's share: only the
    # time after rank 1 arrived (the 4 ms it waited are off the path).
    real_paths = [os.path.join(real, "rank-%d.json.gz" % r) for r in (0, 1)]
    p = critical_path(profsh, real_paths)
    check(p.returncode == 0 and "2 ranks linked at 1 collective(s)" in p.stdout and
          "2 collective range(s) run on a backend's own threads" in p.stdout and
          "could not be linked" not in p.stdout,
          "gloo's collectives on the real job are linked: " + p.stdout[-600:] + p.stderr[-300:])
    # Its steps have GPU-side ProfilerStep annotations too; the CLI names and counts the steps
    # as the analysis does (CPU side), so --step N is ProfilerStep#N and "all" names them all.
    for extra, title in ((["--step", "all"], "every step (ProfilerStep#2 to ProfilerStep#4)"),
                         (["--step", "3"], "ProfilerStep#3:")):
        p = subprocess.run([profsh, "critical-path"] + real_paths + ["--rank", "0"] + extra,
                           capture_output=True, text=True)
        check(p.returncode == 0 and p.stdout.startswith("critical path of 2 ranks' traces, " + title),
              "critical-path %s names the steps it covers: %s" % (" ".join(extra), p.stdout[:200] + p.stderr[-300:]))
    p = lua(profsh, work, REAL_GLOO, real)
    check(p.returncode == 0, "the real gloo job's script runs: " + p.stderr[-500:])
    lines = [l.split("\t") for l in p.stdout.splitlines()]
    calls = {int(l[2]): (float(l[3]), float(l[4])) for l in lines if l[0] == "call"}
    edges = [l for l in lines if l[0] == "edge"]
    if len(calls) == 2:
        after_last = calls[0][1] - calls[1][0]
        check(len(edges) == 1 and edges[0][1] == "0" and
              abs(float(edges[0][2]) - after_last) < 0.002 and
              float(edges[0][2]) < calls[0][1] - calls[0][0] - 3000,
              "rank 0's gloo:all_reduce on its path is its time after rank 1 arrived (%.3f µs of "
              "%.3f): %s" % (after_last, calls[0][1] - calls[0][0], edges))
    else:
        check(False, "the first all-reduce on both ranks: %s" % calls)


REAL_GLOO = r'''
local dir = ...
local job = profsh.load_ranks(dir)
for _, c in ipairs(job:collectives()) do
  if c.seq == 0 then print("call", c.name, c.rank, ("%.3f"):format(c.start), ("%.3f"):format(c["end"])) end
end
local cp = job:critical_path{annotation = "ProfilerStep", instance = 0, rank = 0}
for _, e in ipairs(cp:breakdown()) do
  if e.name == "gloo:all_reduce" then print("edge", e.rank, e.duration, e.bound_by) end
end
'''


def main():
    profsh, data = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    docs = {r: json.load(open(os.path.join(data, "rank-%d.json" % r))) for r in (0, 1)}

    def first(r, name):
        return next(e for e in docs[r]["traceEvents"] if e.get("ph") == "X" and e["name"].startswith(name))
    nccl = {r: first(r, "ncclDevKernel") for r in (0, 1)}
    after_last = nccl[0]["ts"] + nccl[0]["dur"] - max(nccl[0]["ts"], nccl[1]["ts"])
    late = first(1, "aten::index_put_")["dur"]
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "overlay.json")
        p = lua(profsh, work, PATH, data, out)
        check(p.returncode == 0, "the path script runs: " + p.stderr[-500:])
        lines = [l.split("\t") for l in p.stdout.splitlines()]
        contributors = [l for l in lines if l[0] == "contributor"]
        check(contributors and contributors[0][1:4] == ["1", "aten::index_put_", "cpu_bound"] and
              float(contributors[0][4]) == late,
              "rank 1's aten::index_put_ heads rank 0's path: %s" % contributors[:2])
        comm = [l for l in lines if l[0] == "edge" and l[2].startswith("ncclDevKernel")]
        check(len(comm) == 1 and comm[0][1] == "0" and float(comm[0][4]) == after_last and
              comm[0][5] == "gpu_communication_bound",
              "the all-reduce counts its time after the last arrival (%s µs): %s" % (after_last, comm))
        duration = [l for l in lines if l[0] == "duration"][0]
        check(duration[2] == "0", "the path ends on rank 0: %s" % duration)
        alone = [l for l in lines if l[0] == "alone"]
        check(alone and alone[0][2].startswith("ncclDevKernel") and
              float(alone[0][3]) == nccl[0]["dur"],
              "unlinked, rank 0's path holds its all-reduce's whole span: %s" % alone)
        whatif = [l for l in lines if l[0] == "whatif"][0]
        check(float(whatif[2]) == float(duration[1]) and float(whatif[3]) >= late - 50,
              "removing aten::index_put_ gains about its time: %s (was %s)" % (whatif, duration))
        nxt = [l for l in lines if l[0] == "next"]
        check(nxt and nxt[0][3] == "gpu_compute_bound" and nxt[0][2].startswith("sm80_xmma_gemm") and
              not any(l[2] == "aten::index_put_" and float(l[4]) > 0 for l in nxt),
              "the next bottleneck is a GEMM kernel: %s" % nxt[:2])
        chained = [l for l in lines if l[0] == "chained"][0]
        check(float(chained[1]) < float(whatif[1]) and chained[2] == "2",
              "a what-if on a what-if changes it further: %s" % chained)
        if os.path.exists(out):
            doc = json.load(open(out))
            flows = [e for e in doc["traceEvents"] if e.get("cat") == "critical_path"]
            starts = [e for e in flows if e["ph"] == "s"]
            ends = {e["id"]: e for e in flows if e["ph"] == "f"}
            check(len(starts) >= 3 and len(starts) == len(ends), "flow pairs: %d" % len(starts))
            # The first all-reduce's kernels: rank 1's starts last; the arrow goes from it to
            # rank 0's kernel.
            kernels = sorted((e for e in doc["traceEvents"] if e.get("ph") == "X" and
                              e["name"].startswith("ncclDevKernel")), key=lambda e: e["ts"])[:2]
            late_k, early_k = max(kernels, key=lambda e: e["ts"]), min(kernels, key=lambda e: e["ts"])
            cross = [s for s in starts if s["args"]["type"] == "critical_path_collective"]
            check(len(cross) == 1 and (cross[0]["pid"], cross[0]["ts"]) == (late_k["pid"], late_k["ts"]) and
                  ends[cross[0]["id"]]["pid"] == early_k["pid"] and early_k["pid"] != late_k["pid"],
                  "a flow from rank 1's all-reduce to rank 0's: %s" % cross)
            check(all(e.get("bp") == "e" for e in ends.values()), "flow ends bind to the enclosing slice")
        else:
            check(False, "the export was written")
        check_gloo(profsh, work, os.path.join(os.path.dirname(data), "gloo_h200"))
        p = lua(profsh, work, ERRORS, data)
        errs = p.stdout.splitlines()
        want = ["say scale = S or remove = true", "scale must be >= 0", "a sync can only be removed",
                "name one of kernel, op and sync", "malformed pattern", "unknown option 'colour'",
                "got no change"]
        check(len(errs) == len(want), "one line per bad change: %s" % errs)
        for got, w in zip(errs, want):
            check(got.startswith("false") and w in got, "error %r in %r" % (w, got))
    for f in failures:
        print("FAIL", f)
    print("critical_path_ranks: %d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
