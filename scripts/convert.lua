-- Converts a trace between formats: Kineto/Chrome JSON (optionally .gz) and profsh's binary
-- format, which loads many times faster.
--   profsh scripts/convert.lua INPUT OUTPUT      (OUTPUT ending in .profsh: binary; else JSON)
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or ".") .. "/common.lua")
local input = arg and arg[1] or common.sample("alexnet_a100.pt.trace.json.gz")
local output = arg and arg[2] or "converted.profsh"

local trace = profsh.load(input)
if output:match("%.profsh$") or output:match("%.profsh%.gz$") then
  trace:save(output)
else
  trace:export_chrome_trace(output)
end
print(string.format("%s -> %s (%d events)", input, output, trace.event_count))
