-- Writes t:critical_path's results for one case as CSV files (check_hta_cp_golden.py compares
-- them with HTA's): arg = trace, out folder, annotation, first instance, last instance (or
-- "none"), data-load names (comma-separated, or ""), rounding ("exact" or "hta").
local trace_path, out, annotation, first, last, data_load, rounding = table.unpack(arg)
local t = profsh.load(trace_path)
local options = {annotation = annotation, rounding = rounding}
if first ~= "none" then options.instance = {math.tointeger(tonumber(first)), math.tointeger(tonumber(last))} end
if data_load ~= "" then
  options.data_load_events = {}
  for name in data_load:gmatch("[^,]+") do table.insert(options.data_load_events, name) end
end
local cp = t:critical_path(options)
cp:summary():to_csv(out .. "/summary.csv")
cp:breakdown():to_csv(out .. "/breakdown.csv")
cp.nodes:to_csv(out .. "/path.csv")
local f = assert(io.open(out .. "/duration.txt", "w"))
f:write(string.format("%.3f\n", cp.duration))
f:write(#cp.notes, "\n")
for _, note in ipairs(cp.notes) do f:write(note, "\n") end
f:close()
