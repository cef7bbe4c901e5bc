-- Writes profsh's TensorBoard views of a trace as CSV files into a folder (check_views_golden.py
-- compares them with the plugin's answers recorded in golden/).
local trace_path, out = arg[1], arg[2]
local t = profsh.load(trace_path)
local steps = t:step_breakdown()
steps:to_csv(out .. "/step_breakdown.csv")
steps.average:to_csv(out .. "/step_average.csv")
t:gpu_summary():to_csv(out .. "/gpu_summary.csv")
t:kernel_summary():to_csv(out .. "/kernel_summary.csv")

-- key_averages rows with their tensor-core fields, by name and by name and input shapes (the
-- plugin's operator table's two groupings). input_shapes is written as Python's str() of the
-- plugin's input_shape list, the key it groups by.
local function python_list(value)
  if type(value) ~= "table" then return tostring(value) end
  local items = {}
  for i = 1, #value do items[i] = python_list(value[i]) end
  return "[" .. table.concat(items, ", ") .. "]"
end
local function csv_field(value)
  local text = tostring(value)
  if text:find('[",\n]') then text = '"' .. text:gsub('"', '""') .. '"' end
  return text
end
local columns = {"name", "input_shapes", "kind", "device_type", "count", "self_cuda_time_total",
                 "cuda_time_total", "tc_eligible", "tc_self_ratio", "tc_total_ratio"}
for file, by_shape in pairs({key_averages = false, key_averages_input = true}) do
  local f = assert(io.open(out .. "/" .. file .. ".csv", "w"))
  f:write(table.concat(columns, ","), "\n")
  for _, row in ipairs(t:key_averages{group_by_input_shape = by_shape}) do
    local cells = {}
    for i, column in ipairs(columns) do
      local value
      if column == "name" then
        value = row.key
      elseif column == "input_shapes" then
        value = by_shape and python_list(row.input_shapes) or ""
      else
        value = row[column]
      end
      cells[i] = csv_field(value)
    end
    f:write(table.concat(cells, ","), "\n")
  end
  f:close()
end
