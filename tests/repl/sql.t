# SQL over a trace from the shell: Perfetto's tables, a query's rows, and SQLite's own errors.
profsh> t = profsh.load("data/kineto/cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz")
profsh> rows = t:sql("SELECT count(*) AS slices, sum(dur > 0) AS ranges FROM slice")
profsh> rows[1].slices, rows[1].ranges
18	16
profsh> t:sql("SELECT nme FROM slice")
stdin:1: SQLite: no such column: nme
  in: SELECT nme FROM slice
profsh> both = t:sql("SELECT p.pid, t.tid, p.pid FROM thread t JOIN process p USING (upid) ORDER BY t.tid LIMIT 1")
profsh> table.concat(both.columns, " "), both[1].pid == both[1].pid_2
pid tid pid_2	true
