// A job's rank summaries in Lua: profsh.load_summaries(dir_or_glob_or_list, {align=...}) and the
// SummaryJob it returns (engine/summary/summary_job.h): job.ranks, job:collectives(), each rank's
// stored analyses (job:temporal_breakdown() ...), job:step_times(), job:slowest_ranks(),
// job:drifting_ranks().
#include <memory>

#include "bindings/lua_api.h"
#include "bindings/lua_ranks.h"
#include "bindings/lua_support.h"
#include "engine/summary/summary_job.h"

namespace profsh::lua {

namespace {

const char* const kJobType = "profsh.SummaryJob";

struct JobHandle {
  std::shared_ptr<const SummaryJob> job;
};

const SummaryJob& CheckJob(lua_State* L, const char* function) {
  return *CheckUserdata<JobHandle>(L, 1, kJobType, function)->job;
}

template <typename T>
T Must(Result<T> r) {
  if (!r.ok()) throw LuaError(r.error().message);
  return std::move(r.value());
}

int LoadSummaries(lua_State* L) {
  return Protect(L, [&] {
    SummaryJobOptions options;
    options.paths = PathListArg(L, "load_summaries", ResolveSummaryPaths);
    Options opts(L, 2, "load_summaries", {"align", "allow_missing"});
    if (auto align = opts.String("align")) {
      auto a = ParseRankAlignment(*align);
      if (!a.ok())
        throw LuaError("bad option 'align' to 'load_summaries' (" + a.error().message + ")");
      options.align = a.value();
    }
    options.allow_missing = opts.Bool("allow_missing", false);
    auto job = std::make_shared<const SummaryJob>(Must(LoadSummaryJob(options)));
    NewUserdata(L, kJobType, JobHandle{std::move(job)});
    return 1;
  });
}

int JobCollectivesMethod(lua_State* L) {
  return Protect(L, [&] {
    const SummaryJob& job = CheckJob(L, "collectives");
    Options opts(L, 2, "collectives", {});
    CollectiveAnalysis a = Must(JobCollectives(job));
    PushRows(L, std::move(a.calls), {{"ranks", std::move(a.ranks)}});
    if (a.straggler >= 0) {
      lua_pushinteger(L, a.straggler);
      lua_setfield(L, -2, "straggler");
    }
    return 1;
  });
}

// The summaries hold the device-time analyses with the default event options: another choice
// needs the traces.
void RefuseTraceOnlyOptions(const Options& opts, const char* function) {
  for (const char* key : {"include_last_profiler_step", "exact_rounding"}) {
    if (opts.Bool(key, false))
      throw LuaError(std::string(function) + ": " + key +
                     "=true: the summaries hold these rows with the default (false); load the "
                     "traces with profsh.load_ranks for this option");
  }
}

int JobTemporalBreakdown(lua_State* L) {
  return Protect(L, [&] {
    const SummaryJob& job = CheckJob(L, "temporal_breakdown");
    Options opts(L, 2, "temporal_breakdown",
                 {"by_step", "include_last_profiler_step", "exact_rounding"});
    RefuseTraceOnlyOptions(opts, "temporal_breakdown");
    const bool by_step = opts.Bool("by_step", false);
    PushRows(L,
             Must(JobAnalysis(job, by_step ? "temporal_breakdown_by_step" : "temporal_breakdown")),
             {});
    return 1;
  });
}

int JobCommCompOverlap(lua_State* L) {
  return Protect(L, [&] {
    const SummaryJob& job = CheckJob(L, "comm_comp_overlap");
    Options opts(L, 2, "comm_comp_overlap", {"include_last_profiler_step", "exact_rounding"});
    RefuseTraceOnlyOptions(opts, "comm_comp_overlap");
    PushRows(L, Must(JobAnalysis(job, "comm_comp_overlap")), {});
    return 1;
  });
}

int JobStepBreakdown(lua_State* L) {
  return Protect(L, [&] {
    const SummaryJob& job = CheckJob(L, "step_breakdown");
    Options opts(L, 2, "step_breakdown", {});
    AnalysisRows steps = Must(JobAnalysis(job, "step_breakdown"));
    PushRows(L, std::move(steps), {{"average", Must(JobAnalysis(job, "step_breakdown_average"))}});
    return 1;
  });
}

template <Result<AnalysisRows> (*Analysis)(const SummaryJob&)>
int JobRows(lua_State* L, const char* name) {
  return Protect(L, [&] {
    const SummaryJob& job = CheckJob(L, name);
    Options opts(L, 2, name, {});
    PushRows(L, Must(Analysis(job)), {});
    return 1;
  });
}

int JobStepTimesMethod(lua_State* L) {
  return JobRows<JobStepTimes>(L, "step_times");
}
int JobSlowestRanks(lua_State* L) {
  return JobRows<SlowestRanksPerStep>(L, "slowest_ranks");
}
int JobDriftingRanks(lua_State* L) {
  return JobRows<DriftingRanks>(L, "drifting_ranks");
}

int JobField(lua_State* L) {
  return Protect(L, [&] {
    const SummaryJob& job = CheckJob(L, "index");
    if (lua_type(L, 2) != LUA_TSTRING) {
      lua_pushnil(L);
      return 1;
    }
    const std::string_view key = lua_tostring(L, 2);
    if (key == "ranks") {
      std::vector<int32_t> ranks;
      for (const RankSource& r : job.ranks) ranks.push_back(r.rank);
      PushRankTable(L, ranks, job.ranks, &job.align, job.skew.matched, job.skew.median_us,
                    job.skew.max_us);
      // Each rank's trace, as its summary names it.
      for (size_t i = 0; i < job.summaries.size(); ++i) {
        lua_rawgeti(L, -1, static_cast<lua_Integer>(i + 1));
        lua_pushstring(L, job.summaries[i].summary.options.path.c_str());
        lua_setfield(L, -2, "trace");
        lua_pop(L, 1);
      }
    } else if (key == "event_count") {
      size_t events = 0;
      for (const RankSource& r : job.ranks) events += r.events;
      lua_pushinteger(L, static_cast<lua_Integer>(events));
    } else if (key == "align") {
      lua_pushstring(L, RankAlignmentName(job.align).c_str());
    } else if (key == "warnings") {
      lua_createtable(L, static_cast<int>(job.notes.size()), 0);
      for (size_t i = 0; i < job.notes.size(); ++i) {
        lua_pushstring(L, job.notes[i].c_str());
        lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
      }
    } else {
      lua_pushnil(L);
    }
    return 1;
  });
}

int JobToString(lua_State* L) {
  return Protect(L, [&] {
    const SummaryJob& job = CheckJob(L, "tostring");
    const std::string text = "SummaryJob(" + std::to_string(job.ranks.size()) +
                             " ranks, align=" + RankAlignmentName(job.align) + ")";
    lua_pushstring(L, text.c_str());
    return 1;
  });
}

int JobLen(lua_State* L) {
  return Protect(L, [&] {
    lua_pushinteger(L, static_cast<lua_Integer>(CheckJob(L, "len").ranks.size()));
    return 1;
  });
}

}  // namespace

void RegisterSummaries(lua_State* L) {
  RegisterType(L, kJobType,
               {{"collectives", JobCollectivesMethod},
                {"temporal_breakdown", JobTemporalBreakdown},
                {"comm_comp_overlap", JobCommCompOverlap},
                {"step_breakdown", JobStepBreakdown},
                {"step_times", JobStepTimesMethod},
                {"slowest_ranks", JobSlowestRanks},
                {"drifting_ranks", JobDriftingRanks}},
               JobField, {"ranks", "event_count", "align", "warnings"},
               {{"__gc", GcUserdata<JobHandle>}, {"__tostring", JobToString}, {"__len", JobLen}});
  lua_pushcfunction(L, LoadSummaries);
  lua_setfield(L, -2, "load_summaries");
}

}  // namespace profsh::lua
