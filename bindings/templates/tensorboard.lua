-- The TensorBoard profiler plugin's views on one page, in its layout: overview, operator,
-- kernel, memory, distributed, module (docs/ANALYSIS.md, "TensorBoard views"). Times in us.
local report = ...
local t = report.trace

report:subtitle(("%s: %s, %.3f ms"):format(t.path, report:count(t.event_count, "event", "events"),
                                          t.duration / 1000))

local categories = {"kernel", "memcpy", "memset", "communication", "runtime", "dataloader",
                    "cpu_exec", "other"}
local us = {total = "us", mean = "us", max = "us", min = "us", time_at_stake = "us"}
for _, c in ipairs(categories) do us[c] = "us" end

-- Overview: the GPU summary, each step's time by category, the average step, recommendations.
report:section("Overview", "overview")
local steps = t:step_breakdown()
local step_rows = {}
for i, r in ipairs(steps) do step_rows[i] = r end
if #step_rows > 0 then
  report:chart{kind = "stacked", title = "Step time breakdown", unit = "us", rows = step_rows,
               category = "step", values = categories, limit = 0}
end
report:heading("Step time breakdown")
report:table(steps, {units = us})
report:heading("Average step time")
report:table(steps.average, {units = us})
report:heading("GPU summary")
report:table(t:gpu_summary())
report:heading("Recommendations")
report:table(t:recommendations(), {columns = {"rule", "text", "evidence", "time_at_stake"},
                                   units = us, limit = 0})

-- Operator: torch's operator table with the plugin's tensor-core columns, operators only (the
-- plugin's operator view leaves out runtime calls and device work).
report:section("Operator", "operator")
local avgs = t:key_averages()
local device = avgs:total_average().self_cuda_time_total ~= 0
local sort = device and "self_cuda_time_total" or "self_cpu_time_total"
local columns = {"key", "count", "self_cpu_time_total", "cpu_time_total"}
if device then
  columns[#columns + 1] = "self_cuda_time_total"
  columns[#columns + 1] = "cuda_time_total"
  -- The plugin's tensor-core columns, where the operator rows have them.
  local ok, eligible = pcall(function() return avgs[1].tc_eligible end)
  if ok and eligible ~= nil then
    for _, c in ipairs({"tc_eligible", "tc_self_ratio", "tc_total_ratio"}) do columns[#columns + 1] = c end
  end
end
local operators = {}
for _, a in ipairs(avgs:sorted(sort)) do
  if a.kind == "cpu_op" then
    local row = {}
    for _, c in ipairs(columns) do
      local ok, v = pcall(function() return a[c] end)
      -- The plugin's "Tensor Cores Eligible" column says Yes or No.
      if type(v) == "boolean" then v = v and "Yes" or "No" end
      if ok then row[c] = v end
    end
    operators[#operators + 1] = row
  end
end
local top_ops = {}
for i, a in ipairs(operators) do
  if i > 10 then break end
  top_ops[i] = {name = a.key, self_cpu = a.self_cpu_time_total, self_device = a.self_cuda_time_total}
end
report:chart{kind = "bar", title = device and "Self device time of the top operators"
                                      or "Self host time of the top operators",
             unit = "us", rows = top_ops, category = "name",
             values = device and {"self_device", "self_cpu"} or {"self_cpu"},
             labels = {self_cpu = "self host", self_device = "self device"}}
local operator_units = {}
for _, c in ipairs(columns) do
  if c:match("_time_total$") then operator_units[c] = "us" end
end
report:table(operators, {columns = columns, units = operator_units, limit = 50,
                         labels = {key = "name"}})

-- Kernel: one row per kernel name.
report:section("Kernel", "kernel")
local kernels = t:kernel_summary()
if #kernels == 0 then
  report:text("The trace records no kernel.")
else
  report:chart{kind = "bar", title = "Total time of the top kernels", unit = "us", rows = kernels,
               category = "name", values = {"total"}, limit = 10}
  report:table(kernels, {units = us, sort = "total", limit = 50})
end

-- Memory: the allocator's curve of the first GPU (else the CPU), allocations, operators.
report:section("Memory", "memory")
local memory = t:memory_summary()
if #memory.devices == 0 then
  report:text("The trace records no allocations (torch.profiler's profile_memory=True).")
else
  report:table(memory.devices)
  local curve = {}
  for _, p in ipairs(memory.curve) do
    if p.device == memory.default_device then curve[#curve + 1] = p end
  end
  if #curve > 1 then
    report:chart{kind = "line", title = "Memory of " .. memory.default_device, unit = "bytes",
                 rows = curve, x = "ts", values = {"allocated", "reserved"}}
  end
  report:heading("Operators")
  report:table(memory, {sort = "allocation_size", limit = 50})
  report:heading("Allocations")
  report:table(memory.allocations, {sort = "bytes", limit = 50})
end

-- Distributed and module: views of traces that have them.
local function view(name)
  local ok, method = pcall(function() return t[name] end)
  return ok and method or nil
end

report:section("Distributed", "distributed")
local distributed = view("distributed_summary")
if distributed == nil then
  report:text("This build has no distributed view.")
else
  local d = distributed(t)
  if #d == 0 then
    report:text("The trace records no communication.")
  else
    report:table(d, {units = us, limit = 0})
  end
end

report:section("Module", "module")
local module = view("module_summary")
if module == nil then
  report:text("This build has no module view.")
else
  local m = module(t)
  if #m == 0 then
    report:text("The trace records no nn.Module (python_function events).")
  else
    report:table(m, {limit = 100})
  end
end
