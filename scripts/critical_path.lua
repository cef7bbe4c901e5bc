-- The critical path of a step (HTA's critical path analysis) and what the step would gain if each
-- of the ten longest-running kernels ran twice as fast, one at a time. Each answer is a what-if
-- on the path's graph (cp:whatif), found again without reading the trace: a kernel off the
-- critical path gains nothing, however long it runs.
--   profsh scripts/critical_path.lua [TRACE [ANNOTATION [INSTANCE]]]
-- (by default instance 0 of ProfilerStep; with no argument, the sample's second forward pass)
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or ".") .. "/common.lua")
local trace = common.trace_arg("alexnet_a100.pt.trace.json.gz")
local given = arg and arg[1]
local annotation = given and (arg[2] or "ProfilerStep") or "[param|pytorch.model.alex_net|0|0|0|measure|forward]"
local instance = math.tointeger(tonumber(given and arg[3] or (given and "0" or "1")))

local cp = trace:critical_path{annotation = annotation, instance = instance}
print(string.format("critical path of %s #%d: %.3f us", annotation, instance, cp.duration))
print(cp:summary())
print(cp:contributors(5))

-- The kernels that ran longest in the trace, each name once (a job's ranks repeat them).
local _, by_kernel = trace:kernel_breakdown()
table.sort(by_kernel, function(a, b) return a.sum > b.sum end)
local kernels, seen = {}, {}
for _, k in ipairs(by_kernel) do
  if k.name ~= "others" and not seen[k.name] then
    seen[k.name] = true
    kernels[#kernels + 1] = k
  end
end

-- A kernel's name as a Lua pattern that matches it alone.
local function exactly(name) return "^" .. name:gsub("%p", "%%%0") .. "$" end

print(string.format("\n%-60s %12s %12s %10s %8s", "kernel made 2x faster", "kernel us", "step us",
                    "gain us", "gain %"))
for i = 1, math.min(10, #kernels) do
  local k = kernels[i]
  local w = cp:whatif{{kernel = exactly(k.name), scale = 0.5}}
  print(string.format("%-60s %12.3f %12.3f %10.3f %7.2f%%", k.name:sub(1, 60), k.sum, w.duration,
                      w.gain, w.baseline > 0 and 100 * w.gain / w.baseline or 0))
end
