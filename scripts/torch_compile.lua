-- What torch.compile did in a trace (the seed "profiling torch.compile", answered directly):
-- the compiled regions per step with their compile time, kernels and launch-overhead verdict,
-- graph breaks and the eager islands between compiled code, recompiles, and where the kernel
-- time comes from.
--   profsh scripts/torch_compile.lua [TRACE]
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or ".") .. "/common.lua")
local trace = common.trace_arg("torch_compile_cpu.json.gz")

local regions = trace:compile_regions()
print(regions:table())

local steps = trace:graph_breaks()
print(steps:table())
for _, s in ipairs(steps) do
  if s.compile_time > 0 then
    print(string.format("step %s: %.1f ms of %.1f ms compiling (%.0f%%)", s.step or "-",
                        s.compile_time / 1000, (s.step_time or s.compile_time) / 1000,
                        100 * s.compile_time / (s.step_time or s.compile_time)))
  end
end

-- Recompiles: a frame compiled again (a new shape, a failed guard).
for _, r in ipairs(steps.recompiles) do
  print(string.format("recompile of frame %d (#%d) in step %s: %.1f ms compiling", r.frame,
                      r.recompile, r.step or "-", r.compile_time / 1000))
end

-- The longest eager islands: operators that ran outside compiled code.
local islands = {}
for _, i in ipairs(steps.islands) do islands[#islands + 1] = i end
table.sort(islands, function(a, b) return a.op_time > b.op_time end)
for i = 1, math.min(5, #islands) do
  local island = islands[i]
  print(string.format("eager: %8.3f us  %d op(s) from %s%s", island.op_time, island.ops, island.first_op,
                      island.region ~= "" and ("  inside " .. island.region) or ""))
end

print(trace:kernel_provenance():table())
