-- load_ranks on the traces beside load_summaries on their summaries: every analysis the reduce
-- offers, row by row and cell by cell, for each alignment. Prints "SAME <what> <rows>" or
-- "DIFF <what>: <first difference>", then each alignment's straggler and offsets.
--   profsh compare.lua TRACE_DIR SUMMARY_DIR
local traces, summaries = ...

local function cell_text(v)
  if math.type(v) == "float" then return ("%.9g"):format(v) end
  return tostring(v)
end

local function compare_rows(what, a, b)
  local ca, cb = table.concat(a.columns, ","), table.concat(b.columns, ",")
  if ca ~= cb then return print(("DIFF %s: columns %s vs %s"):format(what, ca, cb)) end
  if #a ~= #b then return print(("DIFF %s: %d rows vs %d"):format(what, #a, #b)) end
  for i = 1, #a do
    for _, c in ipairs(a.columns) do
      local x, y = a[i][c], b[i][c]
      if x ~= y or math.type(x) ~= math.type(y) then
        return print(("DIFF %s: row %d column %s: %s vs %s"):format(what, i, c, cell_text(x), cell_text(y)))
      end
    end
  end
  if table.concat(a.notes, "|") ~= table.concat(b.notes, "|") then
    return print(("DIFF %s: notes %s vs %s"):format(what, table.concat(a.notes, "|"), table.concat(b.notes, "|")))
  end
  if tostring(a) ~= tostring(b) then return print(("DIFF %s: formatted tables differ"):format(what)) end
  print(("SAME %s %d"):format(what, #a))
end

for _, align in ipairs{"min", "abs", "step", "collective"} do
  local t = profsh.load_ranks(traces, {align = align})
  local j = profsh.load_summaries(summaries, {align = align})
  local ct, cj = t:collectives(), j:collectives()
  compare_rows(align .. " collectives", ct, cj)
  compare_rows(align .. " collectives.ranks", ct.ranks, cj.ranks)
  print(("%s straggler %s %s"):format(align, tostring(ct.straggler), tostring(cj.straggler)))
  local offsets_equal = #t.ranks == #j.ranks
  local offsets = {}
  for i = 1, #t.ranks do
    offsets_equal = offsets_equal and t.ranks[i].rank == j.ranks[i].rank and
                    t.ranks[i].offset == j.ranks[i].offset and t.ranks[i].events == j.ranks[i].events
    offsets[#offsets + 1] = ("%d:%s"):format(j.ranks[i].rank, cell_text(j.ranks[i].offset))
  end
  print(("%s offsets %s %s"):format(align, offsets_equal and "SAME" or "DIFF", table.concat(offsets, " ")))
  print(("%s skew %s %s %s %s"):format(align, cell_text(t.ranks.skew_median), cell_text(j.ranks.skew_median),
                                      cell_text(t.ranks.skew_max), cell_text(j.ranks.skew_max)))
  if align == "min" then
    compare_rows("temporal_breakdown", t:temporal_breakdown(), j:temporal_breakdown())
    compare_rows("temporal_breakdown by_step", t:temporal_breakdown{by_step = true},
                 j:temporal_breakdown{by_step = true})
    compare_rows("temporal_breakdown across_ranks", t:temporal_breakdown():across_ranks(),
                 j:temporal_breakdown():across_ranks())
    compare_rows("comm_comp_overlap", t:comm_comp_overlap(), j:comm_comp_overlap())
    local st, sj = t:step_breakdown(), j:step_breakdown()
    compare_rows("step_breakdown", st, sj)
    compare_rows("step_breakdown.average", st.average, sj.average)
    compare_rows("step_breakdown across_ranks", st:across_ranks(), sj:across_ranks())
  end
end
