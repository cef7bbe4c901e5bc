-- The reduce alone, over summaries whose traces may be gone: collectives, the slowest rank of
-- each step and the drifting ranks, printed in full (the test compares two runs' outputs).
--   profsh reduce.lua SUMMARY_DIR_OR_GLOB
local j = profsh.load_summaries((...))
local function dump(name, rows)
  print(name .. " " .. table.concat(rows.columns, ","))
  for _, r in ipairs(rows) do
    local cells = {}
    for i, c in ipairs(rows.columns) do cells[i] = tostring(r[c]) end
    print("  " .. table.concat(cells, ","))
  end
  for _, n in ipairs(rows.notes) do print("  note: " .. n) end
end
local c = j:collectives()
print("ranks " .. #j.ranks .. " events " .. j.event_count .. " straggler " .. tostring(c.straggler))
dump("collectives", c)
dump("collectives.ranks", c.ranks)
dump("step_times", j:step_times())
dump("slowest_ranks", j:slowest_ranks())
dump("drifting_ranks", j:drifting_ranks())
dump("temporal_breakdown", j:temporal_breakdown())
