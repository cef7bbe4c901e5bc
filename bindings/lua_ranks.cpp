// A distributed job's ranks in Lua: profsh.load_ranks(dir_or_glob_or_list, {align=...}),
// trace.ranks, trace:collectives(), and each rank's part of a multi-rank trace for the
// per-rank analyses (engine/load/rank_loader.h, engine/analysis/ranks.h).
#include "bindings/lua_ranks.h"

#include <algorithm>
#include <map>

#include "bindings/lua_api.h"
#include "bindings/lua_support.h"
#include "engine/analysis/ranks.h"
#include "engine/load/rank_loader.h"

namespace profsh::lua {

namespace {

const char* const kTraceType = "profsh.Trace";

int LoadRanksFunction(lua_State* L) {
  return Protect(L, [&] {
    RankLoadOptions options;
    options.paths = PathListArg(L, "load_ranks", ResolveRankPaths);
    Options opts(L, 2, "load_ranks", {"align", "ranks", "allow_missing", "threads"});
    if (auto align = opts.String("align")) {
      auto a = ParseRankAlignment(*align);
      if (!a.ok()) throw LuaError("bad option 'align' to 'load_ranks' (" + a.error().message + ")");
      options.align = a.value();
    }
    options.allow_missing = opts.Bool("allow_missing", false);
    const int64_t threads = opts.Int("threads", 0);
    if (threads < 0) throw LuaError("bad option 'threads' to 'load_ranks' (must be >= 0)");
    options.threads = static_cast<unsigned>(threads);
    opts.Push("ranks");
    if (lua_istable(L, -1)) {
      lua_pushnil(L);
      while (lua_next(L, -2) != 0) {
        if (lua_type(L, -2) != LUA_TSTRING || !lua_isinteger(L, -1))
          throw LuaError("bad option 'ranks' to 'load_ranks' (a map of file -> rank expected)");
        options.ranks[lua_tostring(L, -2)] = lua_tointeger(L, -1);
        lua_pop(L, 1);
      }
    } else if (!lua_isnil(L, -1)) {
      throw LuaError("bad option 'ranks' to 'load_ranks' (a map of file -> rank expected)");
    }
    lua_pop(L, 1);
    auto loaded = LoadRanks(options);
    if (!loaded.ok()) throw LuaError(loaded.error().message);
    auto info = std::make_shared<RankLoadInfo>();
    info->ranks = loaded->ranks;
    info->align = options.align;
    info->residual_skew_median_us = loaded->residual_skew_median_us;
    info->residual_skew_max_us = loaded->residual_skew_max_us;
    info->matched_collectives = loaded->matched_collectives;
    PushTrace(L, std::shared_ptr<Trace>(std::move(loaded->trace)));
    TestTrace(L, -1)->rank_info = std::move(info);
    return 1;
  });
}

// One rank's events as a trace of their own (engine/load/rank_loader.h).
std::shared_ptr<Trace> RankTrace(const Trace& whole, const std::vector<int32_t>& rank_of,
                                 int32_t rank, const RankSource* source) {
  auto part = RankPartTrace(whole, rank_of, rank, source);
  if (!part.ok()) throw LuaError(part.error().message);
  return std::move(part.value());
}

}  // namespace

const std::vector<RankPart>& RankParts(TraceHandle* h) {
  if (!h->rank_parts) {
    auto parts = std::make_shared<std::vector<RankPart>>();
    const std::vector<int32_t> rank_of = RankOfTrack(*h->trace);
    const std::vector<int32_t> ranks = RanksOf(rank_of);
    if (ranks.size() >= 2) {
      for (int32_t r : ranks) {
        const RankSource* source = nullptr;
        if (h->rank_info) {
          for (const RankSource& s : h->rank_info->ranks)
            if (s.rank == r) source = &s;
        }
        parts->push_back(RankPart{r, RankTrace(*h->trace, rank_of, r, source)});
      }
    }
    h->rank_parts = std::move(parts);
  }
  return *h->rank_parts;
}

AnalysisRows ConcatRanks(std::vector<AnalysisRows> results, const std::vector<RankPart>& parts) {
  std::vector<int32_t> ranks;
  for (const RankPart& p : parts) ranks.push_back(p.rank);
  return ConcatRankRows(std::move(results), ranks);
}

AnalysisRows PerRankRows(TraceHandle* h,
                         const std::function<AnalysisRows(const Trace&)>& analysis) {
  const std::vector<RankPart>& parts = RankParts(h);
  if (parts.empty()) return analysis(*h->trace);
  std::vector<AnalysisRows> results;
  for (const RankPart& p : parts) results.push_back(analysis(*p.trace));
  return ConcatRanks(std::move(results), parts);
}

void PushRankTable(lua_State* L, const std::vector<int32_t>& ranks,
                   const std::vector<RankSource>& sources, const RankAlignment* align,
                   size_t matched_collectives, double skew_median_us, double skew_max_us) {
  lua_createtable(L, static_cast<int>(ranks.size()), 2);
  std::map<int32_t, const RankSource*> by_rank;
  for (const RankSource& s : sources) by_rank[s.rank] = &s;
  for (size_t i = 0; i < ranks.size(); ++i) {
    lua_createtable(L, 0, 4);
    lua_pushinteger(L, ranks[i]);
    lua_setfield(L, -2, "rank");
    if (auto it = by_rank.find(ranks[i]); it != by_rank.end()) {
      lua_pushstring(L, it->second->path.c_str());
      lua_setfield(L, -2, "path");
      lua_pushnumber(L, static_cast<double>(it->second->offset_ns) / 1000.0);
      lua_setfield(L, -2, "offset");
      lua_pushinteger(L, static_cast<lua_Integer>(it->second->events));
      lua_setfield(L, -2, "events");
    }
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  if (align != nullptr) {
    lua_pushstring(L, RankAlignmentName(*align).c_str());
    lua_setfield(L, -2, "align");
    if (matched_collectives > 0) {
      lua_pushnumber(L, skew_median_us);
      lua_setfield(L, -2, "skew_median");
      lua_pushnumber(L, skew_max_us);
      lua_setfield(L, -2, "skew_max");
    }
  }
}

void PushTraceRanks(lua_State* L, TraceHandle* h) {
  const std::vector<int32_t> ranks = RanksOf(RankOfTrack(*h->trace));
  if (!h->rank_info) {
    PushRankTable(L, ranks, {}, nullptr, 0, -1, -1);
    return;
  }
  const RankLoadInfo& info = *h->rank_info;
  PushRankTable(L, ranks, info.ranks, &info.align, info.matched_collectives,
                info.residual_skew_median_us, info.residual_skew_max_us);
}

int TraceCollectives(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckUserdata<TraceHandle>(L, 1, kTraceType, "collectives");
    Options opts(L, 2, "collectives", {});
    CollectiveAnalysis a = AnalyzeCollectives(*h->trace);
    PushRows(L, std::move(a.calls), {{"ranks", std::move(a.ranks)}});
    if (a.straggler >= 0) {
      lua_pushinteger(L, a.straggler);
      lua_setfield(L, -2, "straggler");
    }
    return 1;
  });
}

void RegisterRanks(lua_State* L) {
  lua_pushcfunction(L, LoadRanksFunction);
  lua_setfield(L, -2, "load_ranks");
}

}  // namespace profsh::lua
