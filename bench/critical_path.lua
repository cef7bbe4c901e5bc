-- Times t:critical_path on a trace or a job (bench/critical_path_bench.sh): one step, and every
-- step, each on a fresh load so that the model is built in each; prints one line per case.
--   profsh bench/critical_path.lua TRACE_OR_RANK_DIR
local path = ...
local function load()
  local clock = os.clock()
  local t
  if path:match("%.json") or path:match("%.gz$") then t = profsh.load(path) else t = profsh.load_ranks(path, {align = "abs"}) end
  return t, os.clock() - clock
end
local t, load_s = load()
local steps = #t:events{pattern = "^ProfilerStep#"} // math.max(1, #t.ranks)
local function run(label, instance)
  local clock = os.clock()
  local cp = t:critical_path{annotation = "ProfilerStep", instance = instance}
  local s = os.clock() - clock
  print(string.format("profsh: %-10s load %.3f s, critical path %.3f s, length %.0f us, %d ranks, %d steps",
                      label, load_s, s, cp.duration, math.max(1, #t.ranks), steps))
  return s
end
run("one step", 1)
t, load_s = load()
run("all steps", {0, steps - 1})
