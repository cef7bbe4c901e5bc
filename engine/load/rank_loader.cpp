#include "engine/load/rank_loader.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <map>
#include <new>
#include <system_error>
#include <thread>
#include <tuple>

#include "engine/analysis/model/event_model.h"
#include "engine/analysis/ranks.h"
#include "engine/io/paths.h"
#include "engine/load/trace_loader.h"
#include "engine/trace/kineto_schema.h"
#include "engine/trace/trace_append.h"
#include "engine/trace/trace_builder.h"

namespace profsh {

namespace {

bool IsTraceFile(const std::string& name) {
  return name.ends_with(".json") || name.ends_with(".json.gz") || name.ends_with(".profsh");
}

std::string BaseName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// Numeric pids of rank r become r * 2^32 + pid, so that equal pids of two ranks (GPU 0 on every
// node, the same OS pid on two hosts) stay apart; string pids get a "rank r: " prefix.
constexpr int64_t kRankPidStride = int64_t{1} << 32;

struct LoadedFile {
  std::unique_ptr<Trace> trace;
  Error error;
  // The load failed and not even its message could be made (out of memory in the handler).
  bool failed_unnamed = false;
};

}  // namespace

int64_t RankInFileName(const std::string& path) {
  std::string name = BaseName(path);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (size_t p = name.find("rank"); p != std::string::npos; p = name.find("rank", p + 1)) {
    size_t d = p + 4;
    if (d < name.size() && (name[d] == '-' || name[d] == '_')) ++d;
    int64_t rank = -1;
    auto [end, ec] = std::from_chars(name.data() + d, name.data() + name.size(), rank);
    if (ec == std::errc() && rank >= 0) return rank;
  }
  return -1;
}

Result<std::vector<std::string>> ResolveRankPaths(const std::string& dir_or_glob) {
  return FilesOfFolderOrGlob(dir_or_glob, IsTraceFile,
                             "no trace files (.json, .json.gz, .profsh) in this folder");
}

namespace {

class RankMerger {
 public:
  RankMerger() : trace_(std::make_unique<Trace>()), builder_(*trace_) {
    builder_.SetFormat("ranks");
  }

  // Returns how far the file's times moved (ns): the job's times are relative to the first
  // file's origin, a file's own origin (baseTimeNanoseconds) or 0 (its times are absolute).
  int64_t Add(const Trace& from, int32_t rank, const std::string& path) {
    if (first_) {
      first_ = false;
      origin_ns_ = from.has_origin ? from.origin_ns : 0;
      trace_->origin_ns = origin_ns_;
      trace_->has_origin = from.has_origin;
      for (const auto& [key, json] : from.metadata) {
        if (key != "distributedInfo") builder_.AddMetadata(key, json);
      }
    }
    const int64_t shift = (from.has_origin ? from.origin_ns : 0) - origin_ns_;
    const uint32_t process_name = from.strings.Find(kineto::kProcessName).value_or(UINT32_MAX);
    const uint32_t process_labels = from.strings.Find(kineto::kProcessLabels).value_or(UINT32_MAX);
    const uint32_t process_sort = from.strings.Find(kineto::kProcessSortIndex).value_or(UINT32_MAX);
    // Processes of this rank, in the order the file names them.
    for (const ProcessInfo& p : from.processes()) {
      Ident pid = RankPid(from, p.pid, rank);
      std::string name = "rank " + std::to_string(rank);
      if (p.name != 0) name += ": " + std::string(from.str(p.name));
      pending_.push_back(Pending{pid, std::move(name), rank, pending_rank_count_[rank]++});
    }
    for (const auto& w : from.warnings) trace_->warnings.push_back(path + ": " + w);
    const size_t events = AppendEvents(
        from, builder_, [&](size_t i, int64_t* ts, Ident* pid, Ident*, bool* pid_interned) {
          if (from.events.phase(i) == 'M') {
            const uint32_t n = from.events.name(i);
            if (n == process_name || n == process_labels || n == process_sort) return false;
          }
          *ts += shift;
          *pid = RankPid(from, *pid, rank);
          *pid_interned = pid->is_string;  // RankPid interned "rank r: <pid>" here
          return true;
        });
    events_[rank] = events;
    return shift;
  }

  size_t events(int32_t rank) const {
    auto it = events_.find(rank);
    return it == events_.end() ? 0 : it->second;
  }

  // Names and sort order of every rank's processes, then the trace.
  Result<std::unique_ptr<Trace>> Finish() {
    for (const Pending& p : pending_) {
      Meta(p.pid, kineto::kProcessName, "name", p.name);
      Meta(p.pid, kineto::kProcessLabels, "labels", "rank " + std::to_string(p.rank));
      EventFields e;
      e.phase = 'M';
      e.name = kineto::kProcessSortIndex;
      e.pid = p.pid;
      builder_.BeginArgs();
      builder_.AddIntArg("sort_index", static_cast<int64_t>(p.rank) * 1000 + p.index);
      builder_.AddEvent(e, builder_.BuildSchema(), {});
    }
    Status s = builder_.Finish();
    if (!s.ok()) return Error{s.message()};
    return std::move(trace_);
  }

 private:
  struct Pending {
    Ident pid;
    std::string name;
    int32_t rank;
    int64_t index;
  };

  Ident RankPid(const Trace& from, Ident pid, int32_t rank) {
    if (!pid.is_string) {
      pid.number =
          static_cast<int64_t>(rank) * kRankPidStride + (pid.number & (kRankPidStride - 1));
      return pid;
    }
    // A string pid: "rank r: <pid>", interned in the destination and marked as already so.
    const std::string text = "rank " + std::to_string(rank) + ": " + std::string(from.str(pid.str));
    pid.number = 0;
    pid.str = builder_.InternString(text);
    pid.is_string = true;
    return pid;
  }

  void Meta(const Ident& pid, std::string_view name, std::string_view key,
            const std::string& value) {
    EventFields e;
    e.phase = 'M';
    e.name = name;
    e.pid = pid;
    builder_.BeginArgs();
    builder_.AddStringArg(key, value);
    builder_.AddEvent(e, builder_.BuildSchema(), {});
  }

  std::unique_ptr<Trace> trace_;
  TraceBuilder builder_;
  bool first_ = true;
  int64_t origin_ns_ = 0;
  std::vector<Pending> pending_;
  std::map<int32_t, int64_t> pending_rank_count_;
  std::map<int32_t, size_t> events_;
};

// Each rank's anchors on the merged trace: its first event, its ProfilerStep#N starts (the
// event model's steps).
std::vector<RankAnchors> AnchorsOf(const Trace& t, const std::vector<int32_t>& rank_of,
                                   const std::vector<RankSource>& ranks) {
  std::map<int32_t, RankAnchors> by_rank;
  for (const RankSource& r : ranks) by_rank[r.rank].rank = r.rank;
  for (size_t i = 0; i < t.events.size(); ++i) {
    if (t.events.phase(i) == 'M') continue;
    std::optional<int64_t>& first = by_rank[rank_of[t.events.track(i)]].first_event;
    first = std::min(first.value_or(INT64_MAX), t.events.ts(i));
  }
  for (const StepRange& s : ModelOf(t).ids().steps) {
    const int64_t ts = t.events.ts(s.event);
    auto& m = by_rank[rank_of[t.events.track(s.event)]].step_starts;
    auto [it, fresh] = m.emplace(s.number, ts);
    if (!fresh) it->second = std::min(it->second, ts);
  }
  std::vector<RankAnchors> out;
  for (const RankSource& r : ranks) out.push_back(by_rank[r.rank]);
  return out;
}

Status Align(LoadedRanks& out) {
  Trace& t = *out.trace;
  const std::vector<int32_t> rank_of = RankOfTrack(t);
  std::vector<CollectiveCall> calls = CollectiveCalls(t, rank_of);
  auto offsets = AlignmentOffsets(out.align, AnchorsOf(t, rank_of, out.ranks), calls);
  if (!offsets.ok()) return offsets.error();
  std::map<int32_t, int64_t>& offset = offsets.value();
  for (size_t i = 0; i < t.events.size(); ++i) {
    const int64_t o = offset[rank_of[t.events.track(i)]];
    if (o != 0) t.events.ShiftTs(i, o);
  }
  t.RebuildDerived();
  for (RankSource& r : out.ranks) r.offset_ns = offset[r.rank];
  for (CollectiveCall& c : calls) {
    c.ts += offset[c.rank];
    c.end += offset[c.rank];
  }
  const ResidualSkew left = ResidualCollectiveSkew(calls, out.ranks.size());
  out.matched_collectives = left.matched;
  out.residual_skew_median_us = left.median_us;
  out.residual_skew_max_us = left.max_us;
  return Status::Ok();
}

}  // namespace

Status CheckNoRanksMissing(const std::map<int64_t, std::string>& files,
                           const std::string& override) {
  std::string missing;
  int64_t expected = 0;
  // As ranges ("2-5"): a rank taken from a date in a file name leaves a gap of millions.
  for (const auto& [rank, path] : files) {
    if (rank > expected) {
      missing += (missing.empty() ? "" : ", ") + std::to_string(expected);
      if (rank - 1 > expected) missing += "-" + std::to_string(rank - 1);
    }
    expected = rank + 1;
  }
  if (missing.empty()) return Status::Ok();
  std::string loaded;
  for (const auto& [rank, path] : files) loaded += "\n  rank " + std::to_string(rank) + ": " + path;
  return Error{"ranks missing: " + missing + " (allow_missing=true " + override +
               "); loaded:" + loaded};
}

Result<LoadedRanks> LoadRanks(const RankLoadOptions& options) {
  if (options.paths.empty()) return Error{"load_ranks: no trace files given"};
  unsigned threads = options.threads;
  if (threads == 0) threads = std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
  LoadedRanks out;
  out.align = options.align;
  RankMerger merger;
  std::map<int64_t, std::string> seen;  // rank -> path
  // Files load `threads` at a time and are merged in order, so that at most that many whole
  // traces are in memory beside the merged one.
  for (size_t begin = 0; begin < options.paths.size(); begin += threads) {
    const size_t end = std::min(options.paths.size(), begin + threads);
    std::vector<LoadedFile> batch(end - begin);
    std::vector<std::thread> workers;
    workers.reserve(end - begin);  // emplace_back then throws only from the thread's start
    // Where a thread could not start, and why (copied after the join: the copy allocates).
    size_t cannot_start = end;
    std::system_error why_not_started(std::error_code{});
    bool start_out_of_memory = false;
    for (size_t k = begin; k < end && cannot_start == end; ++k) {
      try {
        workers.emplace_back([&, k] {
          // Nothing may escape a thread (that ends the process): a trace too large for memory is
          // an error like any other.
          try {
            auto r = LoadTrace(options.paths[k]);
            if (r.ok()) {
              batch[k - begin].trace = std::move(r.value());
            } else {
              batch[k - begin].error = r.error();
            }
          } catch (const std::exception& e) {
            // The message allocates too: under memory exhaustion it may throw again, and nothing
            // may leave the thread.
            try {
              batch[k - begin].error = Error{options.paths[k] + ": " + e.what()};
            } catch (...) {
              batch[k - begin].failed_unnamed = true;
            }
          }
        });
      } catch (const std::system_error& e) {  // out of threads or memory for a stack
        // A joinable std::thread destroyed ends the process: join the started ones first.
        cannot_start = k;
        why_not_started = e;
      } catch (const std::bad_alloc&) {  // the thread's state
        cannot_start = k;
        start_out_of_memory = true;
      }
    }
    for (std::thread& w : workers) w.join();
    if (cannot_start != end)
      return Error{"load_ranks: cannot start a thread to load " + options.paths[cannot_start] +
                   ": " + (start_out_of_memory ? "out of memory" : why_not_started.what())};
    for (size_t k = begin; k < end; ++k) {
      LoadedFile& f = batch[k - begin];
      const std::string& path = options.paths[k];
      if (!f.trace && f.failed_unnamed) return Error{path + ": out of memory while loading it"};
      if (!f.trace) return f.error;
      int64_t rank = DistributedRank(*f.trace).value_or(-1);
      if (rank < 0) rank = RankInFileName(path);
      if (rank < 0) {
        auto it = options.ranks.find(path);
        if (it == options.ranks.end()) it = options.ranks.find(BaseName(path));
        if (it != options.ranks.end()) rank = it->second;
      }
      if (rank < 0 || rank > INT32_MAX) {
        return Error{path +
                     ": cannot tell its rank (no distributedInfo.rank in the trace, no "
                     "rank-N in its name); give it: ranks = {[\"" +
                     BaseName(path) + "\"] = N}"};
      }
      auto [it, fresh] = seen.emplace(rank, path);
      if (!fresh)
        return Error{"rank " + std::to_string(rank) + " twice: " + it->second + " and " + path};
      const int64_t shift = merger.Add(*f.trace, static_cast<int32_t>(rank), path);
      out.ranks.push_back(RankSource{static_cast<int32_t>(rank), path, 0,
                                     merger.events(static_cast<int32_t>(rank)), f.trace->origin_ns,
                                     f.trace->has_origin, shift});
      f.trace.reset();
    }
  }
  if (!options.allow_missing) {
    if (Status s = CheckNoRanksMissing(seen, "loads them anyway"); !s.ok())
      return Error{s.message()};
  }
  std::sort(out.ranks.begin(), out.ranks.end(),
            [](const RankSource& a, const RankSource& b) { return a.rank < b.rank; });
  auto trace = merger.Finish();
  if (!trace.ok()) return trace.error();
  out.trace = std::move(trace.value());
  out.trace->source_path = options.paths.front();
  Status aligned = Align(out);
  if (!aligned.ok()) return Error{aligned.message()};
  std::string note = "ranks aligned by \"" + RankAlignmentName(out.align) + "\"";
  if (out.matched_collectives > 0) {
    char buf[160];
    std::snprintf(buf, sizeof(buf),
                  "; %zu matched collectives end %.3f us apart (median), %.3f us at most",
                  out.matched_collectives, out.residual_skew_median_us, out.residual_skew_max_us);
    note += buf;
  }
  out.trace->warnings.push_back(note);
  return out;
}

Result<std::shared_ptr<Trace>> RankPartTrace(const Trace& whole,
                                             const std::vector<int32_t>& rank_of_track,
                                             int32_t rank, const RankSource* source) {
  auto part = std::make_shared<Trace>();
  TraceBuilder builder(*part);
  builder.SetFormat(whole.source_format);
  for (const auto& [key, json] : whole.metadata) {
    if (key != "distributedInfo") builder.AddMetadata(key, json);
  }
  builder.AddMetadata("distributedInfo", "{\"rank\": " + std::to_string(rank) + "}");
  part->origin_ns = source ? source->origin_ns : whole.origin_ns;
  part->has_origin = source ? source->has_origin : whole.has_origin;
  const int64_t back = source ? -(source->shift_ns + source->offset_ns) : 0;
  AppendEvents(whole, builder, [&](size_t i, int64_t* ts, Ident*, Ident*, bool*) {
    *ts += back;
    return rank_of_track[whole.events.track(i)] == rank;
  });
  Status s = builder.Finish();
  if (!s.ok()) return Error{s.message()};
  part->source_path = whole.source_path;
  return part;
}

}  // namespace profsh
