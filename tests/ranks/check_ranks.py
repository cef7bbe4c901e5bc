#!/usr/bin/env python3
"""A distributed job's ranks: profsh.load_ranks, its alignments, t:collectives(), the per-rank
analyses with rows:across_ranks(), the Chrome export of a multi-rank trace, and `profsh run` of a
two-rank job.

The numbers are computed here again from the traces' JSON with Python alone:
  - two ranks of a gloo data-parallel job recorded with PyTorch 2.6 (tests/ranks/data, made by
    ddp_job.py; rank 1 is 3 ms late every step): offsets of the four alignments, the collectives'
    arrival skew, wait and the straggler, the skew left after alignment;
  - a real GPU trace loaded twice as ranks 0 and 1: every per-rank analysis gives each rank the
    rows the single trace gives, and the cross-rank view has min = median = max;
  - errors: a rank twice, a rank missing, a file with no rank (each naming the files).
With the Debian 13 root: the same job under `profsh run` (its ranks from the launcher's RANK).

Usage: check_ranks.py PROFSH TEST_DIR TRACES_DIR
"""
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def close(a, b, tol=0.002):
    return a is not None and b is not None and abs(float(a) - float(b)) <= tol


def run_lua(profsh, work, code, *args):
    script = os.path.join(work, "q.lua")
    with open(script, "w") as f:
        f.write(code)
    return subprocess.run([profsh, script] + list(args), capture_output=True, text=True)


def load_json(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        return json.load(f)


def expected_job(data_dir):
    """Offsets per alignment and the collectives of the two-rank job, from the JSON."""
    ranks = {}
    for r in (0, 1):
        doc = load_json(os.path.join(data_dir, "rank-%d.json.gz" % r))
        events = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
        ranks[r] = {
            "begin": min(e["ts"] for e in doc["traceEvents"] if e.get("ph") not in ("M", None)
                         and "ts" in e),
            "steps": {int(e["name"].split("#")[1]): e["ts"] for e in events
                      if e["name"].startswith("ProfilerStep#")},
            "colls": sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                            if e["name"] == "gloo:all_reduce"),
        }
    common = min(set(ranks[0]["steps"]) & set(ranks[1]["steps"]))
    ends = list(zip([c[1] for c in ranks[0]["colls"]], [c[1] for c in ranks[1]["colls"]]))
    offsets = {
        "abs": 0.0,
        "min": ranks[0]["begin"] - ranks[1]["begin"],
        "step": ranks[0]["steps"][common] - ranks[1]["steps"][common],
        "collective": statistics.median(e0 - e1 for e0, e1 in ends),
    }
    return ranks, offsets


LOAD = r'''
local dir, align = ...
local t = profsh.load_ranks(dir, {align = align})
for _, r in ipairs(t.ranks) do
  print(string.format("rank\t%d\t%s\t%.3f\t%d", r.rank, r.path, r.offset, r.events))
end
print(string.format("skew\t%s\t%s\t%s", t.ranks.align, tostring(t.ranks.skew_median), tostring(t.ranks.skew_max)))
local c = t:collectives()
for _, x in ipairs(c) do
  print(string.format("call\t%s\t%d\t%d\t%.3f\t%.3f\t%.3f\t%d", x.name, x.seq, x.rank, x.start, x.arrival_skew, x.wait, x.last))
end
print("straggler\t" .. tostring(c.straggler))
for _, x in ipairs(c.ranks) do
  print(string.format("per_rank\t%d\t%d\t%d\t%.3f", x.rank, x.collectives, x.last_arrivals, x.total_wait))
end
'''


def check_job(profsh, work, data_dir):
    ranks, offsets = expected_job(data_dir)
    single = {}
    for r in (0, 1):
        out = run_lua(profsh, work, 'local t = profsh.load(...); local n = 0\n'
                      'for _, e in ipairs(t:events{}) do if not (e.ph == "M" and e.name:match("^process_")) then n = n + 1 end end\n'
                      'print(n)', os.path.join(data_dir, "rank-%d.json.gz" % r))
        single[r] = int(out.stdout.split()[0]) if out.returncode == 0 else -1
    for align, offset in offsets.items():
        r = run_lua(profsh, work, LOAD, data_dir, align)
        if r.returncode != 0:
            failures.append("load_ranks align=%s failed: %s" % (align, r.stderr))
            continue
        lines = [l.split("\t") for l in r.stdout.splitlines()]
        got = {int(l[1]): l for l in lines if l[0] == "rank"}
        check(sorted(got) == [0, 1], "%s: ranks %s" % (align, sorted(got)))
        if sorted(got) != [0, 1]:
            continue
        check(got[0][2].endswith("rank-0.json.gz") and got[1][2].endswith("rank-1.json.gz"),
              "%s: paths" % align)
        check(close(got[0][3], 0) and close(got[1][3], offset),
              "%s: offset of rank 1 %s, expected %.3f" % (align, got[1][3], offset))
        check(int(got[0][4]) == single[0] and int(got[1][4]) == single[1],
              "%s: events per rank %s %s vs %s" % (align, got[0][4], got[1][4], single))
        # Collectives after this alignment: rank 1 moved by the offset.
        shifted = {0: ranks[0]["colls"], 1: [(s + offset, e + offset) for s, e in ranks[1]["colls"]]}
        spread = sorted(abs(a[1] - b[1]) for a, b in zip(shifted[0], shifted[1]))
        skew = [l for l in lines if l[0] == "skew"][0]
        check(skew[1] == align and close(skew[2], statistics.median(spread), 0.01)
              and close(skew[3], max(spread), 0.01),
              "%s: residual skew %s vs median %.3f max %.3f" % (align, skew[2:], statistics.median(spread), max(spread)))
        calls = [l for l in lines if l[0] == "call"]
        check(len(calls) == 2 * len(ranks[0]["colls"]), "%s: %d collective calls" % (align, len(calls)))
        last_count = {0: 0, 1: 0}
        wait_sum = {0: 0.0, 1: 0.0}
        for k in range(len(ranks[0]["colls"])):
            starts = {r: shifted[r][k][0] for r in (0, 1)}
            first, last = min(starts.values()), max(starts.values())
            late = max((0, 1), key=lambda r: (starts[r], -r))
            last_count[late] += 1
            for r in (0, 1):
                wait_sum[r] += last - starts[r]
                row = [c for c in calls if int(c[2]) == k and int(c[3]) == r]
                check(len(row) == 1 and close(row[0][5], starts[r] - first, 0.01)
                      and close(row[0][6], last - starts[r], 0.01) and int(row[0][7]) == (r == late),
                      "%s: collective %d rank %d: %s" % (align, k, r, row))
        straggler = max((0, 1), key=lambda r: last_count[r])
        got_straggler = [l for l in lines if l[0] == "straggler"][0][1]
        check(got_straggler == str(straggler), "%s: straggler %s, expected %d" % (align, got_straggler, straggler))
        for l in lines:
            if l[0] == "per_rank":
                r = int(l[1])
                check(int(l[3]) == last_count[r] and close(l[4], wait_sum[r], 0.05),
                      "%s: per-rank row %s (last %d, wait %.3f)" % (align, l, last_count[r], wait_sum[r]))
        if align == "abs":
            # Both ranks ran on one machine: its clock is theirs, and rank 1 is the straggler.
            check(got_straggler == "1", "abs: rank 1 (3 ms late every step) is the straggler")


ERRORS = r'''
local ok, err = pcall(profsh.load_ranks, ...)
print(ok and "loaded" or err)
'''


def check_errors(profsh, work, data_dir, traces_dir):
    d = os.path.join(work, "dup")
    os.makedirs(d)
    shutil.copy(os.path.join(data_dir, "rank-0.json.gz"), os.path.join(d, "a.json.gz"))
    shutil.copy(os.path.join(data_dir, "rank-0.json.gz"), os.path.join(d, "b.json.gz"))
    out = run_lua(profsh, work, ERRORS, d).stdout
    check("rank 0 twice" in out and "a.json.gz" in out and "b.json.gz" in out, "duplicate: %s" % out)
    d = os.path.join(work, "missing")
    os.makedirs(d)
    shutil.copy(os.path.join(data_dir, "rank-1.json.gz"), os.path.join(d, "rank-1.json.gz"))
    out = run_lua(profsh, work, ERRORS, d).stdout
    check("ranks missing: 0" in out and "rank-1.json.gz" in out, "missing: %s" % out)
    out = run_lua(profsh, work, 'local ok, e = pcall(profsh.load_ranks, ..., {allow_missing = true})\n'
                  'print(ok and (#e.ranks .. " " .. e.ranks[1].rank .. " " .. e:processes()[1].name) or e)', d).stdout
    check(out.strip().startswith("1 1 rank 1: "), "allow_missing: %s" % out)
    d = os.path.join(work, "unnamed")
    os.makedirs(d)
    shutil.copy(os.path.join(traces_dir, "triton_example_triton_example.json.gz"), os.path.join(d, "job.json.gz"))
    out = run_lua(profsh, work, ERRORS, d).stdout
    check("job.json.gz: cannot tell its rank" in out and 'ranks = {["job.json.gz"] = N}' in out,
          "no rank: %s" % out)
    out = run_lua(profsh, work, 'local t = profsh.load_ranks(..., {ranks = {["job.json.gz"] = 0}})\n'
                  'print(t.ranks[1].rank)', d).stdout
    check(out.strip() == "0", "rank given in the map: %s" % out)
    out = run_lua(profsh, work, ERRORS, os.path.join(work, "nothing-*.json")).stdout
    check("no such folder, and no file matches it" in out, "glob matching nothing: %s" % out)
    out = run_lua(profsh, work, 'print(pcall(profsh.load_ranks, ..., {align = "median"}))', data_dir).stdout
    check("unknown alignment 'median'" in out, "bad align: %s" % out)
    out = run_lua(profsh, work, 'print(#profsh.load_ranks(...).ranks)',
                  os.path.join(data_dir, "rank-*.json.gz")).stdout
    check(out.strip() == "2", "glob: %s" % out)


PER_RANK = r'''
local a, b = ...
local singles = {profsh.load(a), profsh.load(b)}
local t = profsh.load_ranks({a, b})
-- Each rank's rows, in rank order, must be the rows its own trace gives alone.
local function same(name, call)
  local s0, s1, m = call(singles[1]), call(singles[2]), call(t)
  if #m ~= #s0 + #s1 then print("MISMATCH " .. name .. " rows " .. #s0 .. "+" .. #s1 .. " vs " .. #m) return end
  for i, row in ipairs(m) do
    local ref, want_rank = s0[i], 0
    if i > #s0 then ref, want_rank = s1[i - #s0], 1 end
    if row.rank ~= want_rank then print("MISMATCH " .. name .. " rank " .. tostring(row.rank)) return end
    for _, c in ipairs((want_rank == 0 and s0 or s1).columns) do
      if c ~= "rank" and row[c] ~= ref[c] then
        print("MISMATCH " .. name .. " " .. c .. " " .. tostring(row[c]) .. " vs " .. tostring(ref[c])) return
      end
    end
  end
  print("same " .. name .. " " .. #s0 .. " " .. #s1)
end
same("temporal_breakdown", function(x) return x:temporal_breakdown() end)
same("comm_comp_overlap", function(x) return x:comm_comp_overlap() end)
same("kernel_breakdown.by_type", function(x) return (x:kernel_breakdown()) end)
same("kernel_breakdown.by_kernel", function(x) return select(2, x:kernel_breakdown()) end)
same("idle_time_breakdown", function(x) return x:idle_time_breakdown() end)
same("queue_length_summary", function(x) return x:queue_length_summary() end)
same("kernel_launch_stats", function(x) return x:kernel_launch_stats() end)
same("stats", function(x) return x:stats("cuda_gpu_kern_sum") end)
same("kernel_table", function(x) return x:kernel_table() end)
same("kernel_provenance", function(x) return x:kernel_provenance() end)
local l0, l1, lm = singles[1]:kernel_launch_stats(), singles[2]:kernel_launch_stats(), t:kernel_launch_stats()
local ok = #lm.short_kernels == #l0.short_kernels + #l1.short_kernels
for i, row in ipairs(lm.short_kernels) do
  local want = i <= #l0.short_kernels and l0.short_kernels[i] or l1.short_kernels[i - #l0.short_kernels]
  ok = ok and row.correlation == want.correlation and row.rank == (i <= #l0.short_kernels and 0 or 1)
end
print("short_kernels", tostring(ok), #lm.short_kernels)
local x = t:temporal_breakdown():across_ranks()
local r = x[1]
local k0, k1 = singles[1]:temporal_breakdown()[1].kernel_time, singles[2]:temporal_breakdown()[1].kernel_time
print("across", #x, x[1].ranks, r.kernel_time_min == math.min(k0, k1) and r.kernel_time_max == math.max(k0, k1),
      r.kernel_time_max_rank == (k0 >= k1 and 0 or 1))
t:export_chrome_trace(a .. ".merged.json")
'''


def check_per_rank(profsh, work, traces_dir):
    # Two different real GPU traces as ranks 0 and 1 (the second one's distributedInfo says 1).
    sources = [os.path.join(traces_dir, "ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"),
               os.path.join(traces_dir, "critical_path_simple_add_benchmark_result_493459_1694039959_trace.json.gz")]
    if not all(os.path.exists(p) for p in sources):
        print("skipped per-rank analyses: %s missing" % sources)
        return
    a = os.path.join(work, "gpu-rank-0.json")
    b = os.path.join(work, "gpu-rank-1.json")
    for rank, (src, dst) in enumerate(zip(sources, (a, b))):
        doc = load_json(src)
        doc["distributedInfo"] = dict(doc.get("distributedInfo") or {}, rank=rank)
        with open(dst, "w") as f:
            json.dump(doc, f)
    r = run_lua(profsh, work, PER_RANK, a, b)
    if r.returncode != 0:
        failures.append("per-rank analyses failed: %s" % r.stderr[-600:])
        return
    out = r.stdout
    check("MISMATCH" not in out, "per-rank analyses: %s" % [l for l in out.splitlines() if "MISMATCH" in l])
    for name in ("temporal_breakdown", "comm_comp_overlap", "kernel_breakdown.by_type",
                 "kernel_breakdown.by_kernel", "idle_time_breakdown", "queue_length_summary",
                 "kernel_launch_stats", "stats", "kernel_table", "kernel_provenance"):
        check(("same " + name) in out, "per-rank %s: %s" % (name, out[-300:]))
    sk = [l.split("\t") for l in out.splitlines() if l.startswith("short_kernels")]
    check(sk and sk[0][1] == "true", "short_kernels selection per rank: %s" % sk)
    across = [l.split("\t") for l in out.splitlines() if l.startswith("across")]
    check(across and across[0][1] == "1" and across[0][2] == "2" and across[0][3] == "true"
          and across[0][4] == "true", "across_ranks: %s" % across)
    # The Chrome export: every process named and labelled after its rank, ranks apart in order.
    merged = load_json(a + ".merged.json")
    names, labels, sort = {}, {}, {}
    for e in merged["traceEvents"]:
        if e.get("ph") != "M":
            continue
        if e["name"] == "process_name":
            names[e["pid"]] = e["args"]["name"]
        elif e["name"] == "process_labels":
            labels[e["pid"]] = e["args"]["labels"]
        elif e["name"] == "process_sort_index":
            sort[e["pid"]] = e["args"]["sort_index"]
    pids = {e["pid"] for e in merged["traceEvents"] if e.get("ph") == "X"}
    check(pids and all(p in names and p in labels for p in pids), "export: unnamed processes")
    for p in pids:
        rank = labels.get(p, "")
        check(rank in ("rank 0", "rank 1") and names.get(p, "").startswith(rank),
              "export: process %s named %r labelled %r" % (p, names.get(p), rank))
    rank0 = [sort[p] for p in pids if labels.get(p) == "rank 0"]
    rank1 = [sort[p] for p in pids if labels.get(p) == "rank 1"]
    check(rank0 and rank1 and max(rank0) < min(rank1), "export: rank 0's processes sort first")


RUN = r'''
local t = profsh.load(...)
local ranks = {}
for _, r in ipairs(t.ranks) do ranks[#ranks + 1] = r.rank end
print("ranks", table.concat(ranks, ","))
local c = t:collectives()
print("calls", #c, "straggler", tostring(c.straggler))
'''


def check_profsh_run(profsh, work, test_dir, root):
    if root is None:
        print("skipped profsh run of a two-rank job: no Debian 13 root")
        return
    in_root = os.path.join(test_dir, "..", "torch2", "in_root.sh")
    out = os.path.join(work, "job.profsh")
    env = dict(os.environ, MASTER_PORT="29547")
    env.setdefault("PROFSH_CACHE", os.path.join(work, "cache"))
    r = subprocess.run([in_root, root, profsh, "run", "--no-table", "-o", out, "--", "sh",
                        os.path.join(test_dir, "launch_two_ranks.sh"),
                        os.path.join(test_dir, "ddp_job.py"), "-"],
                       capture_output=True, text=True, env=env, timeout=600)
    check(r.returncode == 0, "profsh run of the two-rank job: %d %s" % (r.returncode, r.stderr[-500:]))
    if r.returncode != 0:
        return
    q = run_lua(profsh, work, RUN, out)
    lines = [l.split("\t") for l in q.stdout.splitlines()]
    check(["ranks", "0,1"] in lines, "profsh run: ranks %s %s" % (lines, q.stderr[-300:]))
    calls = [l for l in lines if l[0] == "calls"]
    # Each rank: DDP's start-up broadcasts, then per step a gradient all_reduce and an explicit one
    # (the dispatcher's c10d ops: gloo's own ranges are asynchronous, which the operator source
    # leaves out).
    check(calls and int(calls[0][1]) >= 2 * 2 * 6 and int(calls[0][1]) % 2 == 0 and calls[0][3] == "1",
          "profsh run: 24 collective calls or more, rank 1 the straggler: %s" % calls)


def main():
    profsh, test_dir, traces_dir = sys.argv[1], sys.argv[2], sys.argv[3]
    data_dir = os.path.join(test_dir, "data")
    root = None
    make_root = os.path.join(test_dir, "..", "torch2", "debian13_root.sh")
    r = subprocess.run([make_root], capture_output=True, text=True)
    if r.returncode == 0:
        root = r.stdout.strip().splitlines()[-1]
    with tempfile.TemporaryDirectory() as work:
        check_job(profsh, work, data_dir)
        check_errors(profsh, work, data_dir, traces_dir)
        check_per_rank(profsh, work, traces_dir)
        check_profsh_run(profsh, work, test_dir, root)
    if failures:
        print("\n".join(failures[:40]))
        sys.exit(1)
    print("ranks: all checks passed")


if __name__ == "__main__":
    main()
