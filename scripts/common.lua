-- Shared by the recipes: where the bundled sample traces are, and argument handling.
-- Usage from a recipe: local common = dofile(<dir of the recipe> .. "/common.lua")
local common = {}

common.dir = (debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$")) or "."

function common.sample(name)
  return common.dir .. "/samples/" .. name
end

-- The trace to work on: the first argument, or a bundled sample.
function common.trace_arg(default_sample)
  local path = arg and arg[1] or common.sample(default_sample)
  return profsh.load(path), path
end

return common
