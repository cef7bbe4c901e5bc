#!/usr/bin/env python3
"""Rank summaries (profsh summarize): each holds what the job-wide analyses need, figure for figure.

  - the two-rank gloo job of tests/ranks/data: each summary equals its dump in golden/; from the
    two summaries alone (read here with
    Python's sqlite3), every alignment's offsets, the ranks' event counts and t:collectives()
    (every row, the per-rank rows, the straggler) are recomputed as load_ranks computes them, and
    must equal what profsh.load_ranks prints from the full traces;
  - two real GPU traces as ranks 0 and 1: the summaries' per-rank rows (temporal_breakdown, with
    and without by_step, comm_comp_overlap, step_breakdown and its average) equal load_ranks'
    rows of each rank, cell for cell;
  - the command line: several traces -> one rank-R.summary.sqlite per rank in a folder; a trace
    without a rank is named, with the --rank hint; --rank with several traces is a usage error;
  - profsh run --summary of two processes started with RANK=0 and RANK=1 (skipped without torch
    in /usr/bin/python3): one summary per rank, whose rows are its rank's rows of the run's trace;
  - size: a synthetic trace with 10 times the events per step gives a summary of about the same
    size (the per-step top lists are capped), and both stay under 1 MB.

Usage: check_summary.py PROFSH TRACES_DIR RANKS_DATA_DIR
"""
import gzip
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def run_lua(profsh, work, code, *args):
    script = os.path.join(work, "q.lua")
    with open(script, "w") as f:
        f.write(code)
    return run([profsh, script] + list(args))


def load_json(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        return json.load(f)


def fmt(v):
    if v is None:
        return "nil"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return "%d" % v
    if isinstance(v, float):
        return "%.17g" % v
    return str(v)


class Summary:
    def __init__(self, path):
        db = sqlite3.connect(path)
        self.meta = dict(db.execute("SELECT key, value FROM meta"))
        cols = [c[1] for c in db.execute("PRAGMA table_info(rank)")]
        self.rank = dict(zip(cols, db.execute("SELECT * FROM rank").fetchone()))
        self.steps = {s: (a, b) for s, a, b in db.execute("SELECT step, start_ns, end_ns FROM steps")}
        self.collectives = db.execute(
            "SELECT source, process_group, name, seq, start_ns, end_ns FROM collectives "
            "ORDER BY rowid").fetchall()
        self.analyses = {}
        for aid, name in db.execute("SELECT id, name FROM analyses"):
            columns = [n for (n,) in db.execute(
                "SELECT name FROM analysis_columns WHERE analysis = ? ORDER BY position", (aid,))]
            rows = {}
            for r, p, v in db.execute(
                    "SELECT row, position, value FROM analysis_cells WHERE analysis = ?", (aid,)):
                rows.setdefault(r, [None] * len(columns))[p] = v
            self.analyses[name] = (columns, [rows[r] for r in sorted(rows)])
        db.close()


GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")


def dump(path):
    """Every table of a summary as text, in rowid order; the trace's path left out (it is
    where the test ran)."""
    db = sqlite3.connect(path)
    lines = []
    tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid")]
    for t in tables:
        cols = [c[1] for c in db.execute("PRAGMA table_info(%s)" % t)]
        lines.append("## %s: %s" % (t, ", ".join(cols)))
        for row in db.execute("SELECT * FROM %s ORDER BY rowid" % t):
            row = ["<path>" if t == "rank" and c == "path" else v for c, v in zip(cols, row)]
            lines.append("\t".join(fmt(v) for v in row))
    db.close()
    return "\n".join(lines) + "\n"


def check_golden(path):
    """The summary of each gloo rank equals the committed dump (PROFSH_UPDATE_GOLDEN=1 rewrites
    it after a deliberate change, with the schema version bumped if a column changed meaning)."""
    golden = os.path.join(GOLDEN, os.path.basename(path) + ".txt")
    text = dump(path)
    if os.environ.get("PROFSH_UPDATE_GOLDEN"):
        with open(golden, "w") as f:
            f.write(text)
        return
    want = open(golden).read() if os.path.exists(golden) else ""
    if text != want:
        diff = [(i + 1, a, b) for i, (a, b) in enumerate(zip(text.splitlines(), want.splitlines())) if a != b]
        failures.append("%s differs from %s (%d vs %d lines; first differences %s)" % (
            os.path.basename(path), golden, len(text.splitlines()), len(want.splitlines()), diff[:3]))


SOURCES = ["device_kernel", "param_comms", "host_op", "dispatcher_op"]


def reduce_like_load_ranks(summaries, align):
    """load_ranks + t:collectives() from summaries alone (rank_loader.cpp, ranks.cpp)."""
    first = summaries[0]  # the first path given
    origin = first.rank["origin_ns"] if first.rank["has_origin"] else 0
    ranks = sorted(summaries, key=lambda s: s.rank["rank"])
    shift = {s.rank["rank"]: (s.rank["origin_ns"] if s.rank["has_origin"] else 0) - origin
             for s in summaries}
    present = set(c[0] for s in summaries for c in s.collectives)
    best = min(present, key=SOURCES.index) if present else None
    calls = []  # rank, group, name, seq, ts, end on the job's clock before alignment
    for s in summaries:
        r = s.rank["rank"]
        for src, g, n, seq, ts, end in s.collectives:
            if src == best:
                calls.append([r, g, n, seq, ts + shift[r], end + shift[r]])
    reference = ranks[0].rank["rank"]
    offset = {s.rank["rank"]: 0 for s in summaries}

    def matched_ends():
        by_key, count = {}, {}
        for r, g, n, seq, ts, end in calls:
            by_key.setdefault((g, n, seq), {})[r] = end
            count[(g, n, seq)] = count.get((g, n, seq), 0) + 1
        return [e for k, e in sorted(by_key.items())
                if len(e) == len(summaries) and count[k] == len(summaries)]

    if align == "min":
        begin = {s.rank["rank"]: s.rank["first_event_ns"] + shift[s.rank["rank"]] for s in summaries}
        offset = {r: begin[reference] - begin[r] for r in offset}
    elif align == "step":
        common = min(set.intersection(*[set(s.steps) for s in summaries]))
        start = {s.rank["rank"]: s.steps[common][0] + shift[s.rank["rank"]] for s in summaries}
        offset = {r: start[reference] - start[r] for r in offset}
    elif align == "collective":
        m = matched_ends()
        offset = {r: int(statistics.median([e[reference] - e[r] for e in m])) for r in offset}
    for c in calls:
        c[4] += offset[c[0]]
        c[5] += offset[c[0]]
    spread = [max(e.values()) - min(e.values()) for e in matched_ends()]
    # AnalyzeCollectives
    groups = {}
    for i, c in enumerate(calls):
        groups.setdefault((c[1], c[2], c[3]), []).append(i)
    complete = []
    for key in sorted(groups):
        members = sorted(groups[key], key=lambda i: calls[i][0])
        rs = [calls[i][0] for i in members]
        if len(members) == len(summaries) and len(set(rs)) == len(rs):
            complete.append(members)
    complete.sort(key=lambda m: min(calls[i][4] for i in m))
    rows, per = [], {s.rank["rank"]: [0, 0, 0, 0, 0] for s in summaries}
    for members in complete:
        first_ts = min(calls[i][4] for i in members)
        last, last_member = None, members[0]
        for i in members:
            if last is None or calls[i][4] > last:
                last, last_member = calls[i][4], i
        for i in members:
            r, g, n, seq, ts, end = calls[i]
            skew, wait = ts - first_ts, last - ts
            is_last = 1 if i == last_member and len(members) > 1 else 0
            p = per[r]
            p[0] += 1
            p[1] += is_last
            p[2] += skew
            p[3] = max(p[3], skew)
            p[4] += wait
            rows.append("call\t%s\t%s\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%d" % (
                g, n, seq, r, ts / 1000.0, end / 1000.0, (end - ts) / 1000.0, skew / 1000.0,
                wait / 1000.0, is_last))
    order = sorted(per.items(), key=lambda kv: -kv[1][1])  # stable: by rank within ties
    per_rows = ["per_rank\t%d\t%d\t%d\t%.3f\t%.3f\t%.3f" % (
        r, p[0], p[1], (p[2] / 1000.0 / p[0]) if p[0] else 0, p[3] / 1000.0, p[4] / 1000.0)
        for r, p in order]
    straggler = order[0][0] if order and order[0][1][1] > 0 else None
    info = ["rank\t%d\t%s\t%.3f\t%d" % (s.rank["rank"], s.rank["path"], offset[s.rank["rank"]] / 1000.0,
                                         s.rank["events"]) for s in ranks]
    skew = "skew\t%d\t%.3f\t%.3f" % (len(spread), statistics.median(spread) / 1000.0 if spread else -1,
                                     max(spread) / 1000.0 if spread else -1)
    return info + [skew] + rows + per_rows + ["straggler\t%s" % straggler]


LOAD = r'''
local align, paths = arg[1], {}
for i = 2, #arg do paths[#paths + 1] = arg[i] end
local t = profsh.load_ranks(paths, {align = align})
for _, r in ipairs(t.ranks) do
  print(string.format("rank\t%d\t%s\t%.3f\t%d", r.rank, r.path, r.offset, r.events))
end
print(string.format("skew\t%d\t%.3f\t%.3f", t.ranks.skew_median and 1 or 0,
  t.ranks.skew_median or -1, t.ranks.skew_max or -1))
local c = t:collectives()
for _, x in ipairs(c) do
  print(string.format("call\t%s\t%s\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%d", x.group, x.name,
    x.seq, x.rank, x.start, x["end"], x.duration, x.arrival_skew, x.wait, x.last))
end
for _, p in ipairs(c.ranks) do
  print(string.format("per_rank\t%d\t%d\t%d\t%.3f\t%.3f\t%.3f", p.rank, p.collectives,
    p.last_arrivals, p.mean_arrival_skew, p.max_arrival_skew, p.total_wait))
end
print("straggler\t" .. tostring(c.straggler))
'''


def check_job(profsh, work, data_dir):
    paths = [os.path.join(data_dir, "rank-%d.json.gz" % r) for r in (0, 1)]
    out = os.path.join(work, "job")
    r = run([profsh, "summarize"] + paths + ["-o", out])
    check(r.returncode == 0, "summarize the job: %s" % r.stderr)
    files = sorted(os.listdir(out)) if os.path.isdir(out) else []
    check(files == ["rank-0.summary.sqlite", "rank-1.summary.sqlite"], "job summaries: %s" % files)
    if r.returncode != 0:
        return
    summaries = [Summary(os.path.join(out, f)) for f in files]
    check(summaries[0].meta.get("schema_version") == 1, "schema_version: %s" % summaries[0].meta)
    for f in files:
        check_golden(os.path.join(out, f))
    for align in ("abs", "min", "step", "collective"):
        got = run_lua(profsh, work, LOAD, align, *paths)
        if got.returncode != 0:
            failures.append("load_ranks %s: %s" % (align, got.stderr))
            continue
        lines = got.stdout.splitlines()
        want = reduce_like_load_ranks(summaries, align)
        # load_ranks prints whether it has a skew, the reduce how many collectives matched.
        lines = [l for l in lines if not l.startswith("skew")]
        skew_want = [l for l in want if l.startswith("skew")][0].split("\t")
        skew_got = [l for l in got.stdout.splitlines() if l.startswith("skew")][0].split("\t")
        check(skew_got[2:] == skew_want[2:], "%s: residual skew %s vs %s" % (align, skew_got, skew_want))
        want = [l for l in want if not l.startswith("skew")]
        check(len([l for l in lines if l.startswith("call")]) > 0, "%s: no collectives" % align)
        diff = [(a, b) for a, b in zip(lines, want) if a != b]
        check(len(lines) == len(want) and not diff,
              "%s: load_ranks and the summaries differ (%d vs %d lines): %s" % (
                  align, len(lines), len(want), diff[:3]))


ROWS = r'''
local t = profsh.load_ranks({arg[1], arg[2]})
local function dump(name, rows)
  for i, row in ipairs(rows) do
    local cells = {}
    for _, c in ipairs(rows.columns) do
      local v = row[c]
      if math.type(v) == "integer" then v = string.format("%d", v)
      elseif math.type(v) == "float" then v = string.format("%.17g", v)
      else v = tostring(v) end
      cells[#cells + 1] = c .. "=" .. v
    end
    print(name .. "\t" .. table.concat(cells, "\t"))
  end
end
dump("temporal_breakdown", t:temporal_breakdown())
dump("temporal_breakdown_by_step", t:temporal_breakdown{by_step = true})
dump("comm_comp_overlap", t:comm_comp_overlap())
local s = t:step_breakdown()
dump("step_breakdown", s)
dump("step_breakdown_average", s.average)
'''


def concat_ranks(name, summaries):
    """bindings' ConcatRanks: the columns of every rank by name, a rank column first."""
    columns = ["rank"]
    for s in summaries:
        for c in s.analyses[name][0]:
            if c not in columns:
                columns.append(c)
    lines = []
    for s in summaries:
        cols, rows = s.analyses[name]
        for row in rows:
            full = {c: None for c in columns}
            if "rank" not in cols:
                full["rank"] = s.rank["rank"]
            full.update(zip(cols, row))
            lines.append(name + "\t" + "\t".join("%s=%s" % (c, fmt(full[c])) for c in columns))
    return lines


def check_per_rank(profsh, work, traces_dir):
    sources = [os.path.join(traces_dir, "ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"),
               os.path.join(traces_dir, "critical_path_simple_add_benchmark_result_493459_1694039959_trace.json.gz")]
    if not all(os.path.exists(p) for p in sources):
        print("skipped per-rank rows: %s missing" % sources)
        return
    paths = []
    for rank, src in enumerate(sources):
        doc = load_json(src)
        doc["distributedInfo"] = dict(doc.get("distributedInfo") or {}, rank=rank)
        paths.append(os.path.join(work, "gpu-rank-%d.json" % rank))
        with open(paths[-1], "w") as f:
            json.dump(doc, f)
    summaries = []
    for p in paths:
        out = p + ".summary.sqlite"
        r = run([profsh, "summarize", p, "-o", out])
        check(r.returncode == 0, "summarize %s: %s" % (p, r.stderr))
        if r.returncode != 0:
            return
        summaries.append(Summary(out))
    got = run_lua(profsh, work, ROWS, *paths)
    if got.returncode != 0:
        failures.append("load_ranks rows: %s" % got.stderr)
        return
    lines = got.stdout.splitlines()
    for name in ("temporal_breakdown", "temporal_breakdown_by_step", "comm_comp_overlap",
                 "step_breakdown", "step_breakdown_average"):
        mine = [l for l in lines if l.split("\t")[0] == name]
        want = concat_ranks(name, summaries)
        check(len(mine) > 0, "%s: no rows from load_ranks" % name)
        diff = [(a, b) for a, b in zip(mine, want) if a != b]
        check(len(mine) == len(want) and not diff,
              "%s: load_ranks %d rows, summaries %d; first differences %s" % (
                  name, len(mine), len(want), diff[:2]))
    # Top kernels per step were kept for a trace with kernels and steps.
    db = sqlite3.connect(paths[0] + ".summary.sqlite")
    n = db.execute("SELECT count(*), max(place) FROM step_kernels").fetchone()
    check(n[0] > 0 and n[1] <= 20, "step_kernels: %s" % (n,))
    db.close()


def check_command_line(profsh, work, traces_dir):
    unnamed = os.path.join(traces_dir, "triton_example_triton_example.json.gz")
    r = run([profsh, "summarize", unnamed, "-o", os.path.join(work, "x.sqlite")])
    check(r.returncode == 1 and "triton_example_triton_example.json.gz: cannot tell its rank" in r.stderr
          and "--rank N" in r.stderr, "no rank: %d %s" % (r.returncode, r.stderr))
    check(not os.path.exists(os.path.join(work, "x.sqlite")), "no rank: a file was left")
    r = run([profsh, "summarize", unnamed, "--rank", "5", "-o", os.path.join(work, "x.sqlite")])
    check(r.returncode == 0, "--rank: %s" % r.stderr)
    if r.returncode == 0:
        s = Summary(os.path.join(work, "x.sqlite"))
        check(s.rank["rank"] == 5 and s.rank["rank_from"] == "option", "--rank: %s" % s.rank)
    r = run([profsh, "summarize", unnamed, unnamed, "--rank", "5", "-o", os.path.join(work, "y")])
    check(r.returncode == 2 and "--rank" in r.stderr, "--rank with two traces: %s" % r.stderr)
    r = run([profsh, "summarize", unnamed])
    check(r.returncode == 2 and "no output" in r.stderr, "no -o: %s" % r.stderr)
    bad = os.path.join(work, "rank-3.json")
    with open(bad, "w") as f:
        f.write("not a trace at all")
    good = os.path.join(traces_dir, "cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz")
    r = run([profsh, "summarize", bad, good, "-o", os.path.join(work, "mixed")])
    check(r.returncode == 1 and "rank-3.json" in r.stderr and "1 of 2 traces not summarized" in r.stderr,
          "a corrupt trace among two: %d %s" % (r.returncode, r.stderr))
    left = sorted(os.listdir(os.path.join(work, "mixed")))
    check(left == ["rank-34.summary.sqlite"], "a corrupt trace among two: left %s" % left)


WORKLOAD = """
import torch
x = torch.ones(64, 64)
for i in range(3):
    with torch.autograd.profiler.record_function("ProfilerStep#%d" % i):
        y = torch.mm(x, x) + 1
"""

RUN_ROWS = r'''
local t = profsh.load(arg[1])
local function dump(name, rows)
  for i, row in ipairs(rows) do
    local cells = {}
    for _, c in ipairs(rows.columns) do
      local v = row[c]
      if math.type(v) == "integer" then v = string.format("%d", v)
      elseif math.type(v) == "float" then v = string.format("%.17g", v)
      else v = tostring(v) end
      cells[#cells + 1] = c .. "=" .. v
    end
    print(name .. "\t" .. table.concat(cells, "\t"))
  end
end
dump("step_breakdown", t:step_breakdown())
'''


def check_profsh_run(profsh, work):
    """profsh run --summary of two processes with RANK=0 and RANK=1: one summary per rank, each
    with its rank's rows of the run's trace."""
    if run(["/usr/bin/python3", "-c", "import torch"]).returncode != 0:
        print("skipped profsh run --summary: no torch in /usr/bin/python3")
        return
    script = os.path.join(work, "w.py")
    with open(script, "w") as f:
        f.write(WORKLOAD)
    folder = os.path.join(work, "run-summaries")
    trace = os.path.join(work, "run.profsh")
    r = run([profsh, "run", "--no-table", "--summary", folder, "-o", trace, "--", "sh", "-c",
             "RANK=0 /usr/bin/python3 %s & RANK=1 /usr/bin/python3 %s; wait" % (script, script)],
            timeout=300)
    check(r.returncode == 0 and "2 ranks summarized in" in r.stderr,
          "profsh run --summary: %d %s" % (r.returncode, r.stderr[-500:]))
    files = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    check(files == ["rank-0.summary.sqlite", "rank-1.summary.sqlite"], "run summaries: %s" % files)
    if len(files) != 2:
        return
    summaries = [Summary(os.path.join(folder, f)) for f in files]
    for rank, s in enumerate(summaries):
        check(s.rank["rank"] == rank and s.rank["rank_from"] == "profsh run"
              and sorted(s.steps) == [0, 1, 2], "run summary of rank %d: %s %s" % (rank, s.rank, s.steps))
    got = run_lua(profsh, work, RUN_ROWS, trace)
    mine = [l for l in got.stdout.splitlines() if l.startswith("step_breakdown")]
    want = concat_ranks("step_breakdown", summaries)
    check(mine and mine == want, "run --summary step_breakdown: %s vs %s" % (mine[:2], want[:2]))
    # profsh summarize of the run's trace: the same summaries, the ranks from the labels.
    again = os.path.join(work, "run-again.sqlite")
    r = run([profsh, "summarize", trace, "-o", again])
    files = sorted(os.listdir(again)) if os.path.isdir(again) else []
    check(r.returncode == 0 and files == ["rank-0.summary.sqlite", "rank-1.summary.sqlite"],
          "summarize a two-rank run trace: %s %s" % (files, r.stderr))
    if len(files) == 2:
        for rank, f in enumerate(files):
            s = Summary(os.path.join(again, f))
            check(s.rank["rank_from"] == "process labels" and s.analyses == summaries[rank].analyses
                  and s.collectives == summaries[rank].collectives and s.steps == summaries[rank].steps,
                  "summarize of the run's trace, rank %d: %s" % (rank, s.rank))
    r = run([profsh, "run", "--summary", folder, "--schedule", "wait=1,active=1", "--", "true"])
    check(r.returncode == 2 and "--summary summarizes a whole run" in r.stderr,
          "--summary with --schedule: %s" % r.stderr)
    blocker = os.path.join(work, "a-file")
    open(blocker, "w").close()
    r = run([profsh, "run", "--summary", os.path.join(blocker, "sub"), "--", "true"])
    check(r.returncode == 2 and "nothing was run" in r.stderr, "--summary unwritable: %s" % r.stderr)


def synthetic_trace(path, steps, ops_per_step, names):
    """A CPU+GPU trace: per step, `ops_per_step` operators of `names` names, each launching a
    kernel, and one all_reduce."""
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}}]
    ts, corr = 0, 0
    for s in range(steps):
        start = ts
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % s, "pid": 1,
                   "tid": 1, "ts": start, "dur": ops_per_step * 10 + 20})
        for k in range(ops_per_step):
            corr += 1
            t0 = start + 5 + k * 10
            name = "aten::op%d" % (k % names)
            ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": t0, "dur": 8})
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": t0 + 1, "dur": 3, "args": {"correlation": corr}})
            ev.append({"ph": "X", "cat": "kernel", "name": "kernel_%d" % (k % names), "pid": 0, "tid": 7,
                       "ts": t0 + 4, "dur": 6, "args": {"correlation": corr, "device": 0, "stream": 7}})
        ev.append({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1,
                   "ts": start + ops_per_step * 10 + 5, "dur": 10,
                   "args": {"Collective name": "allreduce", "Process Group Name": "0", "Seq": s,
                            "In msg nelems": 1024, "Out msg nelems": 1024, "dtype": "Float"}})
        ts = start + ops_per_step * 10 + 40
    with open(path, "w") as f:
        json.dump({"distributedInfo": {"rank": 0}, "traceEvents": ev}, f)


def check_size(profsh, work):
    sizes = {}
    for ops in (200, 2000):
        trace = os.path.join(work, "big-%d.json" % ops)
        synthetic_trace(trace, 50, ops, 100)
        out = trace + ".summary.sqlite"
        r = run([profsh, "summarize", trace, "-o", out])
        check(r.returncode == 0, "summarize a synthetic trace: %s" % r.stderr)
        if r.returncode != 0:
            return
        sizes[ops] = (os.path.getsize(trace), os.path.getsize(out))
        db = sqlite3.connect(out)
        per_step = db.execute("SELECT max(c) FROM (SELECT count(*) c FROM step_operators GROUP BY step)").fetchone()[0]
        names = db.execute("SELECT min(operators) FROM steps").fetchone()[0]
        # 100 operator names and record_param_comms
        check(per_step == 20 and names == 101, "top operators per step %s of %s names" % (per_step, names))
        db.close()
    (t_small, s_small), (t_big, s_big) = sizes[200], sizes[2000]
    print("summary size: trace %d B -> %d B; trace %d B -> %d B" % (t_small, s_small, t_big, s_big))
    check(t_big > 8 * t_small, "the big trace is not bigger: %s" % sizes)
    check(s_big < 1.2 * s_small and s_big < 1 << 20, "the summary grows with the events: %s" % sizes)


def main():
    profsh, traces_dir, ranks_data = sys.argv[1], sys.argv[2], sys.argv[3]
    with tempfile.TemporaryDirectory() as work:
        check_job(profsh, work, ranks_data)
        check_per_rank(profsh, work, traces_dir)
        check_command_line(profsh, work, traces_dir)
        check_size(profsh, work)
        check_profsh_run(profsh, work)
    for f in failures:
        print("FAIL:", f)
    if failures:
        sys.exit(1)
    print("rank summaries: all checks passed")


if __name__ == "__main__":
    main()
