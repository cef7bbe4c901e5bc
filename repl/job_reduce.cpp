#include "repl/job_reduce.h"

#include <filesystem>

#include "bindings/interpreter.h"
#include "repl/command_line.h"

namespace profsh::repl {

int ReduceSummaries(const std::string& folder, bool ranks_failed) {
  std::string error;
  auto session = lua::Interpreter::Create(&error);
  if (!session) return CommandFailed("job map", error);
  // The values reach Lua as arguments, never as code.
  session->SetArgs({"profsh"}, "job map",
                   {(std::filesystem::path(folder) / "*.summary.sqlite").string(),
                    ranks_failed ? "1" : "0", folder});
  const char* chunk = R"lua(
local pattern, allow_missing, folder = arg[1], arg[2] == "1", arg[3]
local ok, job = pcall(profsh.load_summaries, pattern, {allow_missing = allow_missing})
if not ok then
  local text = "profsh job map: the reduce of " .. pattern .. " failed: " .. tostring(job)
  error(setmetatable({}, {__tostring = function() return text end}))
end
local missing = {}
local have = {}
for _, r in ipairs(job.ranks) do have[r.rank] = true end
local last = job.ranks[#job.ranks].rank
for r = 0, last do if not have[r] then missing[#missing + 1] = tostring(r) end end
print(("reduce of %d ranks%s (profsh.load_summaries(%q)):"):format(#job.ranks,
      #missing > 0 and " (missing: " .. table.concat(missing, ", ") .. ")" or "", pattern))

local c = job:collectives()
if c.straggler then
  for _, r in ipairs(c.ranks) do
    if r.rank == c.straggler then
      print(("  straggler: rank %d, last to %d of %d collectives, %.3f us after the first on average")
            :format(r.rank, r.last_arrivals, r.collectives, r.mean_arrival_skew))
    end
  end
else
  print("  straggler: none (no collective matched across ranks)")
end

local steps = job:slowest_ranks()
local count, worst = {}, {}
for _, s in ipairs(steps) do
  if s.excess > 0 then  -- a step every rank took as long as the median has no slowest rank
    count[s.slowest_rank] = (count[s.slowest_rank] or 0) + 1
    worst[s.slowest_rank] = math.max(worst[s.slowest_rank] or 0, s.excess)
  end
end
local slowest, n = nil, 0
for rank, k in pairs(count) do
  if k > n or (k == n and rank < slowest) then slowest, n = rank, k end
end
if not slowest then
  print("  slowest rank per step: none (every rank's steps last as long as the median)")
else
  print(("  slowest rank per step: rank %d in %d of %d steps (up to %.3f us over the median)")
        :format(slowest, n, #steps, worst[slowest]))
end

local drifting = {}
for _, d in ipairs(job:drifting_ranks()) do
  if d.drifting == 1 then
    drifting[#drifting + 1] = ("%d (%+.3f us a step)"):format(d.rank, d.slope)
  end
end
print("  drifting ranks: " .. (#drifting > 0 and table.concat(drifting, ", ") or "none"))
print(("  more: profsh report %s --template ranks"):format(pattern))
)lua";
  return session->RunString(chunk, "=profsh job map") == 0 ? 0 : 1;
}

}  // namespace profsh::repl
