#!/usr/bin/env python3
"""`profsh diff --sort/--min-change/--row-limit` and profsh.diff's sort, min_change, row_limit on
two traces of tests/data/kineto: the rows come in the order of the chosen change (recomputed from
the CSV's own columns), the floor and the limit leave out what they say, a note says so, HTA's
columns and groups stay; bad values are usage errors (exit 2) or Lua errors naming the option.

Usage: check_diff_sort.py PROFSH TESTS_DIR
"""
import csv
import io
import os
import subprocess
import sys

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def main():
    profsh, tests = sys.argv[1], sys.argv[2]
    control = os.path.join(tests, "data/kineto/critical_path_simple_add_benchmark_result_493459_1694039959_trace.json.gz")
    test = os.path.join(tests, "data/kineto/execution_trace_benchmark_simple_add_trace.json.gz")

    def diff(*args):
        r = subprocess.run([profsh, "diff", control, test, "--format", "csv", *args],
                           capture_output=True, text=True, timeout=120)
        return r, list(csv.DictReader(io.StringIO(r.stdout)))

    r, everything = diff()
    check(r.returncode == 0 and len(everything) > 20 and [x["name"] for x in everything] ==
          sorted(x["name"] for x in everything), "by default the rows come in HTA's order, by name")
    unchanged_but_slower = [x for x in everything if x["change"] == "unchanged" and int(x["diff_duration"]) != 0]
    check(unchanged_but_slower, "HTA calls some names unchanged whose time moved (%d)" % len(unchanged_but_slower))

    for key in ("diff_duration", "diff_counts"):
        r, rows = diff("--sort", key)
        sizes = [abs(int(x[key])) for x in rows]
        check(r.returncode == 0 and len(rows) == len(everything) and sizes == sorted(sizes, reverse=True)
              and sizes[0] > sizes[-1] and "note: sorted by the size of %s" % key in r.stderr,
              "--sort %s orders the rows by the size of the change, largest first (%s)" % (key, sizes[:4]))
    r, rows = diff("--sort", "test_total_duration")
    totals = [int(x["test_total_duration"]) for x in rows]
    check(r.returncode == 0 and totals == sorted(totals, reverse=True), "--sort test_total_duration: largest first")

    r, rows = diff("--sort", "diff_duration", "--min-change", "10000")
    kept = [x["name"] for x in rows]
    want = [x["name"] for x in everything if abs(int(x["diff_duration"])) >= 10000]
    check(r.returncode == 0 and sorted(kept) == sorted(want) and 0 < len(kept) < len(everything) and
          "rows left out: |diff_duration| below 10000 us" in r.stderr,
          "--min-change 10000 keeps the %d rows that changed by 10 ms or more" % len(want))
    r, rows = diff("--sort", "diff_counts", "--min-change", "2")
    check(r.returncode == 0 and rows and all(abs(int(x["diff_counts"])) >= 2 for x in rows),
          "with --sort diff_counts the floor is on the counts")
    r, rows = diff("--sort", "diff_duration", "--row-limit", "3")
    check(r.returncode == 0 and len(rows) == 3 and "3 of %d rows shown (row limit)" % len(everything) in r.stderr,
          "--row-limit 3 keeps the first three")
    check(set(rows[0]) == set(everything[0]), "the columns stay HTA's")

    # The table's group line still counts every name compared.
    t = subprocess.run([profsh, "diff", control, test, "--sort", "diff_duration", "--row-limit", "2"],
                       capture_output=True, text=True, timeout=120)
    groups = {}
    for x in everything:
        groups[x["change"]] = groups.get(x["change"], 0) + 1
    line = ", ".join("%d %s" % (groups.get(g, 0), g) for g in ("added", "deleted", "increased", "decreased", "unchanged"))
    check(t.returncode == 0 and t.stdout.rstrip().endswith(line), "the group line counts every name (%s)" % line)

    for args, want in [(["--sort", "duration"], "unknown sort 'duration' (name, diff_duration, diff_counts"),
                       (["--min-change", "-1"], "--min-change needs a number >= 0, got '-1'"),
                       (["--row-limit", "x"], "--row-limit needs a count >= 0, got 'x'")]:
        r, _ = diff(*args)
        check(r.returncode == 2 and want in r.stderr, "%s is a usage error (%s)" % (" ".join(args), r.stderr.strip()))

    lua = ("local d = profsh.diff(arg[1], arg[2], {sort = 'diff_duration', min_change = 10000, row_limit = 2}) "
           "print(#d, d[1].name, #d.unchanged + #d.added + #d.deleted + #d.increased + #d.decreased)")
    r = subprocess.run([profsh, "-e", lua, "--", control, test], capture_output=True, text=True, timeout=120)
    biggest = max(everything, key=lambda x: abs(int(x["diff_duration"])))["name"]
    check(r.returncode == 0 and r.stdout.split("\t")[:2] == ["2", biggest] and r.stdout.split("\t")[2].strip() == "2",
          "profsh.diff takes sort, min_change, row_limit; its groups are views of the rows kept (%s)" % r.stdout.strip())
    r = subprocess.run([profsh, "-e", "profsh.diff(arg[1], arg[2], {sort = 'count'})", "--", control, test],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 1 and "bad option 'sort' to 'diff' (unknown sort 'count'" in r.stderr,
          "a bad sort from Lua names the option (%s)" % r.stderr.strip().splitlines()[0:1])
    print("diff sort: %d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
