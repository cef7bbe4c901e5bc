-- The seed ITT recipe ("Profiling PyTorch workloads with Intel VTune"), with profsh in VTune's
-- place: attach to the launch script, collect the ITT ranges iteration_0..2 and torch's
-- operators (through emit_itt where torch has ITT, through profsh's operator source where it
-- does not), then show per iteration what VTune's timeline shows.
--   profsh scripts/itt_sample.lua          (or: profsh run -- bash scripts/itt_launch.sh)
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or ".") .. "/common.lua")

local prof = profsh.profile{activities = {"itt", "torch"}}
local status = prof:run{"env", "ITT_RANGES_LIB=" .. profsh.library_dir .. "/libitt_ranges.so",
                        "bash", common.dir .. "/itt_launch.sh"}
if status ~= 0 then error("itt_launch.sh exited with status " .. status) end

for i = 0, 2 do
  local name = "iteration_" .. i
  local found = prof:events{name = name}
  if #found ~= 1 then error(string.format("expected one ITT range %s, found %d", name, #found)) end
  local it = found[1]
  local inside = prof:events{tid = it.tid, from = it.ts, to = it.ts + it.dur}
  local ops = {}
  for _, e in ipairs(inside) do
    if e.cat == "cpu_op" and e.ts >= it.ts and e.ts + e.dur <= it.ts + it.dur and
        (e.name == "aten::conv2d" or e.name == "aten::linear") then
      ops[#ops + 1] = string.format("%s %.1f ms", e.name, e.dur / 1000)
    end
  end
  print(string.format("%s (%s): %.1f ms; %s", name, it.cat, it.dur / 1000, table.concat(ops, ", ")))
end
print(prof:key_averages():table{sort_by = "cpu_time_total", row_limit = 10})
prof:export_chrome_trace("itt_sample.json")
print("wrote itt_sample.json")
