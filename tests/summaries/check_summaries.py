#!/usr/bin/env python3
"""The reduce over rank summaries (profsh.load_summaries) against profsh.load_ranks on the traces.

16 synthetic ranks (tests/critical_path_ranks/make_job.py: rank 5 late to every all-reduce, rank
11's step time growing 40 us a step, rank r's clock r ms ahead) are summarized with `profsh
summarize`, then:
  - every alignment: collectives rows, .ranks rows, straggler, offsets and the skew left equal
    load_ranks' figure for figure; so do the per-rank breakdowns and their across_ranks();
  - the slowest rank of each step is rank 11, by 40 us a step over the median; rank 11 alone
    drifts;
  - the reduce gives the same output after the traces are deleted;
  - the `ranks` report template reads summaries;
  - the two gloo ranks of tests/ranks/data (PyTorch 2.6), rank 1's clock origin moved: the same
    equalities;
  - bad summaries: a file that is no SQLite, a truncated one, one without a table or a column,
    a rank missing, a rank twice: each an error naming the file and what is wrong; a missing
    table fails only the analyses that need it, naming the table and how to get it.

Usage: check_summaries.py PROFSH TEST_DIR (tests/)
"""
import gzip
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

RANKS, STEPS, LATE_RANK, TAIL_RANK, TAIL_US = 16, 6, 5, 11, 40
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def run_lua(profsh, work, code, *args):
    script = os.path.join(work, "q.lua")
    with open(script, "w") as f:
        f.write(code)
    return run([profsh, script] + list(args))


def main():
    profsh, tests = sys.argv[1], sys.argv[2]
    here = os.path.join(tests, "summaries")
    work = tempfile.mkdtemp(prefix="profsh-summaries-")
    try:
        traces, summaries = os.path.join(work, "traces"), os.path.join(work, "summaries")
        r = run([sys.executable, os.path.join(tests, "critical_path_ranks", "make_job.py"), traces,
                 "--ranks", str(RANKS), "--steps", str(STEPS), "--late-rank", str(LATE_RANK),
                 "--late-us", "300", "--clock-skew-us", "1000", "--tail-rank", str(TAIL_RANK),
                 "--tail-us-per-step", str(TAIL_US)])
        check(r.returncode == 0, "make_job: " + r.stderr)
        trace_files = sorted(os.path.join(traces, f) for f in os.listdir(traces))
        r = run([profsh, "summarize"] + trace_files + ["-o", summaries])
        check(r.returncode == 0, "profsh summarize: %d %s" % (r.returncode, r.stderr))
        summary_files = sorted(os.listdir(summaries))
        check(len(summary_files) == RANKS, "one summary per rank: %s" % summary_files)

        # Figure for figure against load_ranks.
        r = run([profsh, os.path.join(here, "compare.lua"), traces, summaries])
        check(r.returncode == 0, "compare.lua: " + r.stderr)
        lines = r.stdout.splitlines()
        same = [l for l in lines if l.startswith("SAME ")]
        check(not [l for l in lines if l.startswith("DIFF ")],
              "summaries differ from load_ranks: %s" % [l for l in lines if "DIFF" in l])
        for what in ("collectives", "collectives.ranks"):
            for align in ("min", "abs", "step", "collective"):
                check(any(l.startswith("SAME %s %s " % (align, what)) for l in same),
                      "%s %s compared: %s" % (align, what, lines))
        check(any(l.startswith("SAME min collectives %d" % (RANKS * STEPS)) for l in same),
              "every all-reduce of every rank matched: %s" % lines)
        for what in ("temporal_breakdown", "temporal_breakdown by_step", "comm_comp_overlap",
                     "step_breakdown", "step_breakdown.average", "temporal_breakdown across_ranks",
                     "step_breakdown across_ranks"):
            check(any(l.startswith("SAME %s " % what) and int(l.split()[-1]) > 0 for l in same),
                  "%s compared, with rows: %s" % (what, lines))
        for align in ("min", "abs", "step", "collective"):
            # On the recorded clocks ("abs") the rank whose clock runs furthest ahead looks last.
            straggler = RANKS - 1 if align == "abs" else LATE_RANK
            check("%s straggler %d %d" % (align, straggler, straggler) in lines,
                  "%s: straggler rank %d both ways: %s" % (align, straggler, lines))
            off = [l for l in lines if l.startswith("%s offsets " % align)]
            check(off and off[0].split()[2] == "SAME", "%s offsets equal: %s" % (align, off))
            skew = [l for l in lines if l.startswith("%s skew " % align)]
            check(skew and skew[0].split()[2] == skew[0].split()[3] and
                  skew[0].split()[4] == skew[0].split()[5], "%s skew left equal: %s" % (align, skew))
        # The clocks really needed aligning: rank 3 is 3 ms ahead, so "abs" leaves it there
        # and "collective" moves it back.
        check(any(l.startswith("abs offsets SAME 0:0 1:0") for l in lines), "abs: no offsets")
        check(any(" 3:-3000" in l for l in lines if l.startswith("collective offsets")),
              "collective: rank 3 moved back 3 ms: %s" % lines)

        # Slowest ranks and drift, from the summaries alone; then the same with the traces gone.
        r1 = run([profsh, os.path.join(here, "reduce.lua"), summaries])
        check(r1.returncode == 0, "reduce.lua: " + r1.stderr)
        out = r1.stdout.splitlines()
        slow = out[out.index(next(l for l in out if l.startswith("slowest_ranks "))) + 1:]
        slow = [l.strip().split(",") for l in slow if l.startswith("  ") and "note" not in l][:STEPS]
        for row in slow[1:]:
            step, ranks, slowest, duration, median, excess = row[:6]
            check(int(slowest) == TAIL_RANK and int(ranks) == RANKS,
                  "step %s: slowest rank %d: %s" % (step, TAIL_RANK, row))
            check(abs(float(excess) - (TAIL_US * int(step) + 2)) < 0.01,
                  "step %s: %d us over the median: %s" % (step, TAIL_US * int(step) + 2, row))
        drift_at = out.index(next(l for l in out if l.startswith("drifting_ranks ")))
        drift = [l.strip().split(",") for l in out[drift_at + 1:drift_at + 1 + RANKS]]
        check(drift[0][0] == str(TAIL_RANK) and drift[0][-1] == "1",
              "rank %d drifts first: %s" % (TAIL_RANK, drift[:2]))
        check(all(d[-1] == "0" for d in drift[1:]), "no other rank drifts: %s" % drift)
        shutil.rmtree(traces)
        r2 = run([profsh, os.path.join(here, "reduce.lua"), os.path.join(summaries, "*.sqlite")])
        check(r2.returncode == 0 and r2.stdout == r1.stdout,
              "the reduce after the traces were deleted: %s %s" % (r2.stderr, r2.stdout[:300]))

        # The ranks report over the summaries.
        html = os.path.join(work, "ranks.html")
        r = run([profsh, "report"] + [os.path.join(summaries, f) for f in summary_files] +
                ["--template", "ranks", "-o", html])
        check(r.returncode == 0, "ranks report of summaries: " + r.stderr)
        if r.returncode == 0:
            page = open(html).read()
            check("Slow and drifting ranks" in page and "from their summaries" in page and
                  "Rank %d arrived last" % LATE_RANK in page, "the report's summary sections")

        real_job(profsh, tests, here, work)
        bad_input(profsh, work, summaries, summary_files)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAIL:", f)
    print("%d failures" % len(failures))
    return 1 if failures else 0


def real_job(profsh, tests, here, work):
    """The two gloo ranks of tests/ranks/data (PyTorch 2.6), rank 1's baseTimeNanoseconds moved
    5 ms later (its times stay: its clock's origin differs from rank 0's), so that both loads
    move rank 1's times to rank 0's origin before aligning."""
    traces, summaries = os.path.join(work, "gloo"), os.path.join(work, "gloo_summaries")
    os.makedirs(traces)
    for r in (0, 1):
        with gzip.open(os.path.join(tests, "ranks", "data", "rank-%d.json.gz" % r), "rt") as f:
            doc = json.load(f)
        if r == 1:
            doc["baseTimeNanoseconds"] += 5_000_000
        with open(os.path.join(traces, "rank-%d.json" % r), "w") as f:
            json.dump(doc, f)
    r = run([profsh, "summarize", os.path.join(traces, "rank-0.json"),
             os.path.join(traces, "rank-1.json"), "-o", summaries])
    check(r.returncode == 0, "profsh summarize of the gloo job: " + r.stderr)
    r = run([profsh, os.path.join(here, "compare.lua"), traces, summaries])
    check(r.returncode == 0, "compare.lua on the gloo job: " + r.stderr)
    lines = r.stdout.splitlines()
    check(not [l for l in lines if l.startswith("DIFF ")] and
          len([l for l in lines if l.startswith("SAME ")]) == 15,
          "the gloo job: summaries differ from load_ranks: %s" % lines)
    for align in ("min", "abs", "step", "collective"):
        off = [l for l in lines if l.startswith("%s offsets " % align)]
        check(off and off[0].split()[2] == "SAME", "gloo %s offsets equal: %s" % (align, off))
        skew = [l for l in lines if l.startswith("%s skew " % align)]
        check(skew and skew[0].split()[2] == skew[0].split()[3] and
              skew[0].split()[4] == skew[0].split()[5], "gloo %s skew equal: %s" % (align, skew))
        check("%s straggler 1 1" % align in lines, "gloo %s straggler: %s" % (align, lines))


def bad_input(profsh, work, summaries, files):
    def reduce_error(folder, code="profsh.load_summaries((...))"):
        r = run_lua(profsh, work, code, folder)
        return r.returncode, r.stderr

    def copy(name):
        d = os.path.join(work, name)
        shutil.copytree(summaries, d)
        return d

    # Dangling rows: cells of an analysis the file does not list.
    d = copy("dangling")
    with sqlite3.connect(os.path.join(d, files[7])) as db:
        db.execute("DELETE FROM analyses WHERE name = 'comm_comp_overlap'")
    rc, err = reduce_error(d)
    check(rc != 0 and files[7] in err and "table analysis_columns" in err and
          "not in table analyses" in err, "dangling analysis rows: %s" % err)
    # Not SQLite at all.
    d = copy("not_sqlite")
    with open(os.path.join(d, files[3]), "w") as f:
        f.write("{\"traceEvents\": []}\n")
    rc, err = reduce_error(d)
    check(rc != 0 and files[3] in err and "SQLite" in err, "a text file: %s" % err)
    # Truncated.
    d = copy("truncated")
    p = os.path.join(d, files[4])
    data = open(p, "rb").read()
    open(p, "wb").write(data[:len(data) // 3])
    rc, err = reduce_error(d)
    check(rc != 0 and files[4] in err, "a truncated summary: %s" % err)
    # A table lacking: loads; what needs it says which and how to get it; the rest works.
    d = copy("no_steps")
    with sqlite3.connect(os.path.join(d, files[2])) as db:
        db.execute("DROP TABLE steps")
    rc, err = reduce_error(d, "local j = profsh.load_summaries((...)); print(#j:collectives()); "
                              "j:slowest_ranks()")
    check(rc != 0 and files[2] in err and "no table steps" in err and "profsh summarize" in err,
          "slowest_ranks without table steps: %s" % err)
    rc, err = reduce_error(d, "profsh.load_summaries((...), {align = 'step'})")
    check(rc != 0 and "align=\"step\"" in err and "no table steps" in err and files[2] in err,
          "align=step without table steps: %s" % err)
    r = run_lua(profsh, work, "print(#profsh.load_summaries((...)):collectives())", d)
    check(r.returncode == 0 and r.stdout.strip() == str(RANKS * STEPS),
          "collectives without table steps: %s %s" % (r.stdout, r.stderr))
    # A column lacking.
    d = copy("no_column")
    with sqlite3.connect(os.path.join(d, files[1])) as db:
        db.execute("ALTER TABLE collectives DROP COLUMN seq")
    rc, err = reduce_error(d, "profsh.load_summaries((...)):collectives()")
    check(rc != 0 and files[1] in err and "table collectives has no column seq" in err,
          "collectives without column seq: %s" % err)
    rc, err = reduce_error(d, "profsh.load_summaries((...), {align = 'collective'})")
    check(rc != 0 and "align=\"collective\"" in err and "column seq" in err,
          "align=collective without column seq: %s" % err)
    # An analysis a summary does not hold.
    d = copy("no_analysis")
    with sqlite3.connect(os.path.join(d, files[6])) as db:
        (gone,) = db.execute("SELECT id FROM analyses WHERE name = 'comm_comp_overlap'").fetchone()
        for table in ("analyses", "analysis_columns", "analysis_cells", "analysis_notes"):
            key = "id" if table == "analyses" else "analysis"
            db.execute("DELETE FROM %s WHERE %s = ?" % (table, key), (gone,))
    rc, err = reduce_error(d, "profsh.load_summaries((...)):comm_comp_overlap()")
    check(rc != 0 and files[6] in err and "'comm_comp_overlap'" in err and "profsh summarize" in err,
          "comm_comp_overlap missing: %s" % err)
    # A rank missing; a rank twice.
    d = copy("missing_rank")
    os.remove(os.path.join(d, "rank-3.summary.sqlite"))
    rc, err = reduce_error(d)
    check(rc != 0 and "ranks missing: 3" in err, "rank 3 missing: %s" % err)
    r = run_lua(profsh, work, "print(#profsh.load_summaries((...), {allow_missing = true}).ranks)", d)
    check(r.returncode == 0 and r.stdout.strip() == str(RANKS - 1), "allow_missing: %s" % r.stderr)
    d = copy("twice")
    shutil.copy(os.path.join(d, "rank-3.summary.sqlite"), os.path.join(d, "copy.summary.sqlite"))
    rc, err = reduce_error(d)
    check(rc != 0 and "rank 3 twice" in err and "copy.summary.sqlite" in err, "rank 3 twice: %s" % err)
    # Another schema version.
    d = copy("version")
    with sqlite3.connect(os.path.join(d, files[8])) as db:
        db.execute("UPDATE meta SET value = 99 WHERE key = 'schema_version'")
    rc, err = reduce_error(d)
    check(rc != 0 and files[8] in err and "schema version 99" in err and "profsh summarize" in err,
          "another schema version: %s" % err)
    # An option the summaries were not made with.
    rc, err = reduce_error(summaries, "profsh.load_summaries((...)):temporal_breakdown{"
                                      "include_last_profiler_step = true}")
    check(rc != 0 and "include_last_profiler_step" in err and "load_ranks" in err,
          "an option the summaries lack: %s" % err)
    r = run_lua(profsh, work, "print(#profsh.load_summaries((...)):temporal_breakdown{"
                              "include_last_profiler_step = false})", summaries)
    check(r.returncode == 0 and r.stdout.strip() == str(RANKS), "the default option: %s" % r.stderr)
    # An empty folder.
    d = os.path.join(work, "empty")
    os.makedirs(d)
    rc, err = reduce_error(d)
    check(rc != 0 and "no summaries" in err and d in err, "an empty folder: %s" % err)


if __name__ == "__main__":
    sys.exit(main())
