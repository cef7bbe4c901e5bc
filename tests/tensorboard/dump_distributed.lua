-- Writes trace:distributed_summary() of a trace, or of a folder of ranks ("ranks" as the third
-- argument: profsh.load_ranks), as CSV files, for check_views_more.py.
local source, out, kind = arg[1], arg[2], arg[3]
local t = kind == "ranks" and profsh.load_ranks(source) or profsh.load(source)
local d = t:distributed_summary()
d:to_csv(out .. "/distributed_steps.csv")
d.ops:to_csv(out .. "/distributed_ops.csv")
