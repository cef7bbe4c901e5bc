-- Writes t:critical_path's results for one case as CSV files (check_hta_cp_golden.py compares
-- them with HTA's): arg = trace, out folder, annotation, first instance, last instance (or
-- "none"), data-load names (comma-separated, or ""), rounding ("exact" or "hta"), zero-weight
-- launch edges ("yes" or "no").
local trace_path, out, annotation, first, last, data_load, rounding, launch_edges = table.unpack(arg)
local t = profsh.load(trace_path)
local options = {annotation = annotation, rounding = rounding,
                 zero_weight_launch_edges = launch_edges == "yes"}
if first ~= "none" then options.instance = {math.tointeger(tonumber(first)), math.tointeger(tonumber(last))} end
if data_load ~= "" then
  options.data_load_events = {}
  for name in data_load:gmatch("[^,]+") do table.insert(options.data_load_events, name) end
end
local cp = t:critical_path(options)
cp:summary():to_csv(out .. "/summary.csv")
cp:breakdown():to_csv(out .. "/breakdown.csv")
cp.nodes:to_csv(out .. "/path.csv")
-- The whole graph: its nodes on an edge (networkx's graph holds no other) and its edges by type.
local g = assert(io.open(out .. "/graph.txt", "w"))
local by_type, on_edge, nodes = {}, {}, 0
for _, e in ipairs(cp.graph) do
  by_type[e.type] = (by_type[e.type] or 0) + 1
  for _, n in ipairs({e.src, e.dst}) do
    if not on_edge[n] then on_edge[n], nodes = true, nodes + 1 end
  end
end
g:write("nodes ", nodes, "\n")
for type, n in pairs(by_type) do g:write(type, " ", n, "\n") end
g:close()
local f = assert(io.open(out .. "/duration.txt", "w"))
f:write(string.format("%.3f\n", cp.duration))
f:write(#cp.notes, "\n")
for _, note in ipairs(cp.notes) do f:write(note, "\n") end
f:close()
