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

-- The interpreter for the Python workloads beside the recipes: $PROFSH_PYTHON, or python3.
function common.python()
  return os.getenv("PROFSH_PYTHON") or "python3"
end

-- Runs scripts/<script> with its arguments under the profile p; a failing workload is an error.
function common.run_python(p, script, ...)
  local status = p:run{common.python(), common.dir .. "/" .. script, ...}
  if status ~= 0 then
    error(string.format("%s exited with status %d: does %s import torch and torchvision? If "
                        .. "another Python has them, name it in PROFSH_PYTHON "
                        .. "(PROFSH_PYTHON=/usr/bin/python3 profsh %s)", script, status,
                        common.python(), arg and arg[0] or "RECIPE.lua"), 2)
  end
  if p.summary.operators == 0 then
    io.stderr:write("no PyTorch operators were recorded: " .. table.concat(p.warnings, "; ") .. "\n")
  end
  return p
end

return common
