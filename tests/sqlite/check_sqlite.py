#!/usr/bin/env python3
"""SQL over a trace: `profsh export --sqlite` and `t:to_sqlite` write databases that Debian's
sqlite3 client reads, with Perfetto's tables; every number checked here is computed again from the
trace's JSON in Python, not by profsh. Then `profsh sql`: a query, CSV output, a bad query, a
missing file, usage errors.

usage: check_sqlite.py PROFSH TRACES_DIR SAMPLES_DIR GOLDEN_CASES_DIR
"""
import collections
import csv
import glob
import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

PROFSH, TRACES, SAMPLES, GOLDEN = sys.argv[1:5]
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def sqlite(db, query):
    """Rows of a query, through the sqlite3 client (CSV, so that text with '|' survives)."""
    out = subprocess.run(["sqlite3", "-csv", db, query], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("sqlite3 %s %r: %s" % (db, query, out.stderr))
    return list(csv.reader(io.StringIO(out.stdout)))


def ns(us):
    return round(float(us) * 1000)


def events_of(path):
    data = json.load(gzip.open(path) if path.endswith(".gz") else open(path))
    return data["traceEvents"] if isinstance(data, dict) else data


def check_trace(path, db):
    name = os.path.basename(path)
    events = events_of(path)
    check(sqlite(db, "PRAGMA integrity_check") == [["ok"]], name + ": integrity_check")
    slices = [e for e in events if e.get("ph") in ("X", "i", "I")]
    (count,), = sqlite(db, "SELECT count(*) FROM slice")
    check(int(count) == len(slices), "%s: %s slices, the trace has %d" % (name, count, len(slices)))

    # Perfetto's way to a thread's time: slice -> thread_track -> thread -> process.
    want = collections.defaultdict(lambda: [0, 0])
    for e in events:
        if e.get("ph") == "X" and isinstance(e.get("pid"), int) and isinstance(e.get("tid"), int):
            want[(e["pid"], e["tid"])][0] += 1
            want[(e["pid"], e["tid"])][1] += ns(e.get("dur", 0))
    # Instants have dur 0 and are slices too; count the complete events alone.
    instants = collections.Counter(
        (e["pid"], e["tid"]) for e in events
        if e.get("ph") in ("i", "I") and isinstance(e.get("pid"), int)
        and isinstance(e.get("tid"), int))
    got = {}
    for p, t, n, d in sqlite(db, """
            SELECT process.pid, thread.tid, count(*), sum(slice.dur)
            FROM slice JOIN thread_track ON slice.track_id = thread_track.id
            JOIN thread USING (utid) JOIN process USING (upid)
            WHERE process.pid IS NOT NULL AND thread.tid IS NOT NULL
            GROUP BY process.pid, thread.tid"""):
        key = (int(p), int(t))
        got[key] = [int(n) - instants.get(key, 0), int(d)]
    got = {k: v for k, v in got.items() if v[0] > 0}
    check(got == dict(want),
          "%s: per-thread counts and totals differ:\n  sql  %s\n  json %s" %
          (name, sorted(got.items())[:6], sorted(want.items())[:6]))

    # Flows: each 'f' whose 's' is in the trace, from the launch to the kernel for ac2g.
    starts = {(e.get("cat"), e.get("id")) for e in events if e.get("ph") == "s"}
    finishes = collections.Counter(
        e.get("cat") for e in events if e.get("ph") == "f" and (e.get("cat"), e.get("id")) in starts)
    got_flows = dict((c, int(n)) for c, n in sqlite(
        db, "SELECT category, count(*) FROM flow GROUP BY category"))
    check(got_flows == dict(finishes), "%s: flows %s, the trace has %s" % (name, got_flows, dict(finishes)))
    if finishes.get("ac2g"):
        (bad,), = sqlite(db, """
            SELECT count(*) FROM flow JOIN slice o ON o.id = flow.slice_out
            JOIN slice i ON i.id = flow.slice_in
            WHERE flow.category = 'ac2g' AND (o.kind <> 'runtime' OR
              i.kind NOT IN ('kernel', 'copy', 'set') AND i.category <> 'cuda_sync' OR
              (SELECT int_value FROM args WHERE arg_set_id = o.arg_set_id
                 AND key = 'args.correlation') IS NOT
              (SELECT int_value FROM args WHERE arg_set_id = i.arg_set_id
                 AND key = 'args.correlation'))""")
        check(bad == "0", "%s: %s ac2g flows do not go from a launch to its kernel" % (name, bad))

    # Kernels: as many as the trace's device work, each with the launch of its correlation id.
    device = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    runtime_correlations = {e["args"]["correlation"] for e in events
                            if e.get("ph") == "X" and str(e.get("cat", "")).endswith(("runtime", "driver"))
                            and "correlation" in e.get("args", {})}
    launched = sum(1 for e in device if e.get("args", {}).get("correlation") in runtime_correlations)
    (kernels, linked, device_ns), = sqlite(db, """
        SELECT count(*), count(launch_slice_id), coalesce(sum(dur), 0) FROM kernel""")
    check((int(kernels), int(linked), int(device_ns)) ==
          (len(device), launched, sum(ns(e["dur"]) for e in device)),
          "%s: kernel table %s/%s/%s, trace %d/%d/%d" % (
              name, kernels, linked, device_ns, len(device), launched,
              sum(ns(e["dur"]) for e in device)))

    # Shapes: every "Input Dims" flattened as Perfetto's JSON importer does (one row per number,
    # key args.Input Dims[i][j], flat_key args.Input Dims), through each slice's shared arg set.
    def leaves(value, key):
        if isinstance(value, list):
            kept = [v for v in value if v is not None]
            return [leaf for i, v in enumerate(kept) for leaf in leaves(v, "%s[%d]" % (key, i))]
        if isinstance(value, dict):
            return [leaf for k, v in value.items() if v is not None
                    for leaf in leaves(v, key + "." + k)]
        return [(key, str(value))]
    dims = sorted(leaf for e in slices if "Input Dims" in e.get("args", {})
                  for leaf in leaves(e["args"]["Input Dims"], "args.Input Dims"))
    got_dims = sorted((k, v) for k, v in sqlite(
        db, "SELECT args.key, args.display_value FROM slice JOIN args "
            "ON args.arg_set_id = slice.arg_set_id AND args.flat_key = 'args.Input Dims'"))
    check(got_dims == dims, "%s: %d Input Dims leaves, the trace has %d (or they differ)" %
          (name, len(got_dims), len(dims)))

    # Memory records: count and bytes.
    memory = [e for e in events if e.get("name") == "[memory]"]
    (n, total), = sqlite(db, "SELECT count(*), coalesce(sum(bytes), 0) FROM memory")
    check((int(n), int(total)) == (len(memory), sum(e["args"].get("Bytes", 0) for e in memory)),
          "%s: memory %s rows / %s bytes" % (name, n, total))
    return len(events)


def main():
    tmp = tempfile.mkdtemp(prefix="profsh-sqlite-")
    try:
        traces = sorted(glob.glob(os.path.join(TRACES, "*.json.gz")))
        traces.append(os.path.join(SAMPLES, "alexnet_a100.pt.trace.json.gz"))
        traces.append(os.path.join(GOLDEN, "resnet18_shapes_memory", "trace.json.gz"))
        for i, path in enumerate(traces):
            db = os.path.join(tmp, "%d.sqlite" % i)
            out = subprocess.run([PROFSH, "export", "--sqlite", db, path], capture_output=True, text=True)
            check(out.returncode == 0, "export %s: %s" % (path, out.stderr))
            if out.returncode == 0:
                check_trace(path, db)

        # Through Lua, from profsh's own binary format: the same tables.
        golden = os.path.join(GOLDEN, "resnet18_shapes_memory", "trace.json.gz")
        saved, db = os.path.join(tmp, "t.profsh"), os.path.join(tmp, "lua.sqlite")
        out = subprocess.run([PROFSH, "-e", "profsh.load(arg[1]):save(arg[2]); "
                              "profsh.load(arg[2]):to_sqlite(arg[3])", "--", golden, saved, db],
                             capture_output=True, text=True)
        check(out.returncode == 0, "t:to_sqlite: " + out.stderr)
        if out.returncode == 0:
            check_trace(golden, db)
        # t:sql keeps the trace's database: a TEMP table made by one query is there for the next.
        out = subprocess.run([PROFSH, "-e", "local t = profsh.load(arg[1]); "
                              "t:sql('CREATE TEMP TABLE mine AS SELECT count(*) AS n FROM slice'); "
                              "print(t:sql('SELECT n FROM mine')[1].n)", "--", golden],
                             capture_output=True, text=True)
        check(out.returncode == 0 and out.stdout.strip() ==
              str(sum(1 for e in events_of(golden) if e.get("ph") in ("X", "i", "I"))),
              "t:sql reuses its database: rc %d %r %r" % (out.returncode, out.stdout, out.stderr))
        # The op table is key_averages: its counts are those t:key_averages() gives.
        out = subprocess.run([PROFSH, "-e", "for _, a in ipairs(profsh.load(arg[1]):key_averages()) "
                              "do print(a.key .. '\\t' .. a.count) end", "--", golden],
                             capture_output=True, text=True)
        want = sorted(tuple(line.rsplit("\t", 1)) for line in out.stdout.splitlines())
        got = sorted((k, c) for k, c in sqlite(db, "SELECT name, count FROM op"))
        check(len(want) > 10 and got == want, "op table differs from key_averages: %s vs %s" % (got[:3], want[:3]))

        # profsh sql: a query, CSV, the same on the database file, errors.
        alexnet = os.path.join(SAMPLES, "alexnet_a100.pt.trace.json.gz")
        query = "SELECT kind, count(*) AS n FROM slice GROUP BY kind ORDER BY kind"
        out = subprocess.run([PROFSH, "sql", alexnet, query], capture_output=True, text=True)
        check(out.returncode == 0 and out.stdout.splitlines()[0].split() == ["kind", "n"],
              "profsh sql table: %r %r" % (out.stdout[:200], out.stderr))
        csv_out = subprocess.run([PROFSH, "sql", alexnet, query, "--format", "csv"],
                                 capture_output=True, text=True)
        rows = list(csv.reader(io.StringIO(csv_out.stdout)))
        check(rows[0] == ["kind", "n"] and sum(int(n) for _, n in rows[1:]) ==
              sum(1 for e in events_of(alexnet) if e.get("ph") in ("X", "i")),
              "profsh sql csv: %r" % csv_out.stdout[:300])
        exported = os.path.join(tmp, "alexnet.sqlite")
        subprocess.run([PROFSH, "export", "--sqlite", exported, alexnet], check=True)
        again = subprocess.run([PROFSH, "sql", exported, query, "--format=csv"], capture_output=True, text=True)
        check(again.stdout == csv_out.stdout, "profsh sql on the database file differs")

        # Perfetto's module, functions and views, in memory and on the exported file alike.
        perfetto_query = ("INCLUDE PERFETTO MODULE slices.with_context;\n"
                          "SELECT count(*) AS n, count(extract_arg(arg_set_id, 'args.External id')) AS ext "
                          "FROM thread_slice WHERE depth = 0")
        mem = subprocess.run([PROFSH, "sql", alexnet, perfetto_query, "--format", "csv"],
                             capture_output=True, text=True)
        onfile = subprocess.run([PROFSH, "sql", exported, perfetto_query, "--format", "csv"],
                                capture_output=True, text=True)
        check(mem.returncode == 0 and mem.stdout == onfile.stdout and
              mem.stdout.startswith("n,ext\n") and int(mem.stdout.split()[1].split(",")[1]) > 0,
              "Perfetto query: %r %r / %r" % (mem.stdout, mem.stderr, onfile.stderr))
        missing_module = subprocess.run(
            [PROFSH, "sql", alexnet, "INCLUDE PERFETTO MODULE android.startup.startups; SELECT 1"],
            capture_output=True, text=True)
        check(missing_module.returncode == 1 and "android.startup.startups" in missing_module.stderr
              and "slices.with_context" in missing_module.stderr,
              "INCLUDE of a missing module: rc %d %r" % (missing_module.returncode, missing_module.stderr))
        bad = subprocess.run([PROFSH, "sql", alexnet, "SELECT nme FROM slice"], capture_output=True, text=True)
        check(bad.returncode == 1 and "no such column: nme" in bad.stderr and
              "SELECT nme FROM slice" in bad.stderr and bad.stdout == "",
              "bad query: rc %d %r" % (bad.returncode, bad.stderr))
        two = subprocess.run([PROFSH, "sql", alexnet, "SELECT 1; SELECT 2"], capture_output=True, text=True)
        check(two.returncode == 1 and "one statement at a time" in two.stderr, "two statements: %r" % two.stderr)
        missing = os.path.join(tmp, "no-such-trace.json")
        gone = subprocess.run([PROFSH, "sql", missing, "SELECT 1"], capture_output=True, text=True)
        check(gone.returncode == 1 and missing in gone.stderr, "missing file: rc %d %r" % (gone.returncode, gone.stderr))
        for args in (["sql"], ["sql", alexnet], ["sql", alexnet, "SELECT 1", "x"], ["sql", "--fromat", "csv"],
                     ["export", alexnet], ["export", "--sqlite"]):
            usage = subprocess.run([PROFSH] + args, capture_output=True, text=True)
            check(usage.returncode == 2 and "profsh" in usage.stderr,
                  "usage error %s: rc %d %r" % (args, usage.returncode, usage.stderr))
        # A failed export leaves nothing behind (the writer is atomic).
        target = os.path.join(tmp, "nodir", "x.sqlite")
        failed = subprocess.run([PROFSH, "export", "--sqlite", target, alexnet], capture_output=True, text=True)
        check(failed.returncode == 1 and "x.sqlite" in failed.stderr and not os.path.exists(target),
              "export into a missing folder: rc %d %r" % (failed.returncode, failed.stderr))
    finally:
        shutil.rmtree(tmp)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("sqlite: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
