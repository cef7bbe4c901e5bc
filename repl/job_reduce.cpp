#include "repl/job_reduce.h"

#include <filesystem>

#include "bindings/interpreter.h"
#include "repl/command_line.h"

namespace profsh::repl {

int ReduceSummaries(const std::vector<std::string>& summaries, const std::string& folder) {
  std::string error;
  auto session = lua::Interpreter::Create(&error);
  if (!session) return CommandFailed("job map", error);
  // The values reach Lua as arguments, never as code: the pattern for the report hint, then
  // the summaries this map wrote.
  std::vector<std::string> args = {(std::filesystem::path(folder) / "*.summary.sqlite").string()};
  args.insert(args.end(), summaries.begin(), summaries.end());
  session->SetArgs({"profsh"}, "job map", args);
  const char* chunk = R"lua(
local pattern, files = arg[1], {}
for i = 2, #arg do files[#files + 1] = arg[i] end
local ok, job = pcall(profsh.load_summaries, files, {allow_missing = true})
if not ok then
  local text = "profsh job map: the reduce of the " .. #files .. " summaries written to " ..
               pattern:gsub("/%*%.summary%.sqlite$", "") .. " failed: " .. tostring(job)
  error(setmetatable({}, {__tostring = function() return text end}))
end
local missing = {}
local have = {}
for _, r in ipairs(job.ranks) do have[r.rank] = true end
local last = job.ranks[#job.ranks].rank
for r = 0, last do if not have[r] then missing[#missing + 1] = tostring(r) end end
print(("reduce of %d ranks%s, the summaries this map wrote to %s:"):format(#job.ranks,
      #missing > 0 and " (missing: " .. table.concat(missing, ", ") .. ")" or "",
      (pattern:gsub("/%*%.summary%.sqlite$", ""))))

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

local ok_steps, steps = pcall(job.slowest_ranks, job)
if not ok_steps then
  print("  slowest rank per step: not known (" .. tostring(steps) .. ")")
  steps = {}
end
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
if not ok_steps then
  -- said above
elseif not slowest then
  print("  slowest rank per step: none (every rank's steps last as long as the median)")
else
  print(("  slowest rank per step: rank %d in %d of %d steps (up to %.3f us over the median)")
        :format(slowest, n, #steps, worst[slowest]))
end

local ok_drift, drift = pcall(job.drifting_ranks, job)
if ok_drift then
  local drifting = {}
  for _, d in ipairs(drift) do
    if d.drifting == 1 then
      drifting[#drifting + 1] = ("%d (%+.3f us a step)"):format(d.rank, d.slope)
    end
  end
  print("  drifting ranks: " .. (#drifting > 0 and table.concat(drifting, ", ") or "none"))
else
  print("  drifting ranks: not known (" .. tostring(drift) .. ")")
end
print(("  more: profsh report %s --template ranks"):format(pattern))
)lua";
  return session->RunString(chunk, "=profsh job map") == 0 ? 0 : 1;
}

}  // namespace profsh::repl
