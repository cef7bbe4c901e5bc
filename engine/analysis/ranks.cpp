#include "engine/analysis/ranks.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <tuple>
#include <unordered_map>

#include "engine/analysis/model/collective_args.h"
#include "engine/analysis/model/event_model.h"
#include "engine/trace/collective_names.h"

namespace profsh {

int64_t RankOfLabels(std::string_view labels) {
  // "rank 3", possibly among other comma-separated labels.
  for (size_t p = labels.find("rank "); p != std::string_view::npos;
       p = labels.find("rank ", p + 1)) {
    if (p > 0 && labels[p - 1] != ' ' && labels[p - 1] != ',') continue;
    int64_t rank = -1;
    const char* b = labels.data() + p + 5;
    const char* e = labels.data() + labels.size();
    auto [end, ec] = std::from_chars(b, e, rank);
    if (ec == std::errc() && rank >= 0 && (end == e || *end == ',' || *end == ' ')) return rank;
  }
  return -1;
}

std::optional<int64_t> DistributedRank(const Trace& trace) {
  const std::string* info = trace.FindMetadata("distributedInfo");
  if (info == nullptr) return std::nullopt;
  size_t key = info->find("\"rank\"");
  if (key == std::string::npos) return std::nullopt;
  size_t p = info->find(':', key);
  if (p == std::string::npos) return std::nullopt;
  ++p;
  while (p < info->size() && ((*info)[p] == ' ' || (*info)[p] == '"')) ++p;
  int64_t rank = 0;
  if (std::from_chars(info->data() + p, info->data() + info->size(), rank).ec != std::errc())
    return std::nullopt;
  return rank;
}

std::vector<int32_t> RankOfTrack(const Trace& trace) {
  const int64_t own = DistributedRank(trace).value_or(0);
  std::vector<int32_t> ranks(trace.tracks.size(),
                             static_cast<int32_t>(own >= 0 && own <= INT32_MAX ? own : 0));
  for (const ProcessInfo& p : trace.processes()) {
    if (p.labels == 0) continue;
    const int64_t r = RankOfLabels(trace.str(p.labels));
    if (r < 0 || r > INT32_MAX) continue;
    for (uint32_t t : p.tracks) ranks[t] = static_cast<int32_t>(r);
  }
  return ranks;
}

std::vector<int32_t> RanksOf(const std::vector<int32_t>& rank_of_track) {
  std::vector<int32_t> ranks(rank_of_track);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

namespace {

using Source = CollectiveSource;

std::string Normalized(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '_') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

bool IsNcclKernel(std::string_view n) {
  return n.starts_with("ncclKernel_") || n.starts_with("ncclDevKernel_");
}

// "ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)" -> "AllReduce".
std::string_view KernelCollective(std::string_view n) {
  n.remove_prefix(n.find('_') + 1);
  return n.substr(0, n.find_first_of("_("));
}

Source SourceOf(const Trace& trace, const EventModel& model, size_t i) {
  if (trace.events.phase(i) != 'X') return Source::kNone;
  std::string_view n = trace.str(trace.events.name(i));
  if (IsNcclKernel(n)) {
    const TemplateRole& r = model.role(i);
    return r.role == EventRole::kDeviceWork && r.work == DeviceWorkKind::kKernel
               ? Source::kDeviceKernel
               : Source::kNone;
  }
  switch (CollectiveNameKindOf(n)) {
    case CollectiveNameKind::kParamComms:
      return Source::kParamComms;
    case CollectiveNameKind::kHostOp:
      return Source::kHostOp;
    case CollectiveNameKind::kDispatcherOp:
      // The dispatcher's c10d ops (c10d::allreduce_, ...) enqueue the work: what profsh's
      // operator source sees when the backend's own ranges are asynchronous (gloo's run on its
      // threads).
      return n != "c10d::barrier" ? Source::kDispatcherOp : Source::kNone;
    default:
      return Source::kNone;
  }
}

}  // namespace

const char* CollectiveSourceName(CollectiveSource source) {
  switch (source) {
    case Source::kDeviceKernel:
      return "device_kernel";
    case Source::kParamComms:
      return "param_comms";
    case Source::kHostOp:
      return "host_op";
    case Source::kDispatcherOp:
      return "dispatcher_op";
    case Source::kNone:
      break;
  }
  return "none";
}

std::vector<CollectiveSource> CollectiveSourcesIn(const Trace& trace) {
  const EventModel& model = ModelOf(trace);
  bool present[5] = {};
  for (size_t i = 0; i < trace.events.size(); ++i)
    present[static_cast<size_t>(SourceOf(trace, model, i))] = true;
  std::vector<CollectiveSource> sources;
  for (Source s :
       {Source::kDeviceKernel, Source::kParamComms, Source::kHostOp, Source::kDispatcherOp})
    if (present[static_cast<size_t>(s)]) sources.push_back(s);
  return sources;
}

std::vector<CollectiveCall> CollectiveCalls(const Trace& trace,
                                            const std::vector<int32_t>& rank_of_track) {
  // One source for the whole job, the most exact one present: NCCL's kernels run while the
  // ranks meet; the host calls only enqueue them.
  const std::vector<Source> sources = CollectiveSourcesIn(trace);
  if (sources.empty()) return {};
  return CollectiveCallsOf(trace, rank_of_track, sources.front());
}

std::vector<CollectiveCall> CollectiveCallsOf(const Trace& trace,
                                              const std::vector<int32_t>& rank_of_track,
                                              CollectiveSource best) {
  const EventModel& model = ModelOf(trace);
  std::vector<CollectiveCall> calls;
  if (best == Source::kNone) return calls;
  const CollectiveArgs args(trace);
  std::vector<bool> has_seq;
  for (size_t i = 0; i < trace.events.size(); ++i) {
    if (SourceOf(trace, model, i) != best) continue;
    std::string_view n = trace.str(trace.events.name(i));
    std::string group(args.Group(i).value_or("default"));
    std::string name;
    if (const auto given = args.Name(i)) {
      name = Normalized(*given);
    } else if (best == Source::kDeviceKernel) {
      name = Normalized(KernelCollective(n));
    } else {
      name = Normalized(n.substr(n.rfind(':') + 1));
    }
    const std::optional<int64_t> seq_given = args.Seq(i);
    const int64_t seq = seq_given.value_or(-1);
    has_seq.push_back(seq_given.has_value());
    calls.push_back(CollectiveCall{rank_of_track[trace.events.track(i)], std::move(group),
                                   std::move(name), seq, trace.events.ts(i), trace.events.end(i),
                                   best == Source::kDeviceKernel, static_cast<uint32_t>(i)});
  }
  // Without a sequence number, a call's place among its rank's calls of the same collective in
  // time order (every rank issues a group's collectives in the same order).
  std::vector<size_t> order(calls.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tie(calls[a].rank, calls[a].group, calls[a].name, calls[a].ts) <
           std::tie(calls[b].rank, calls[b].group, calls[b].name, calls[b].ts);
  });
  std::map<std::tuple<int32_t, std::string, std::string>, int64_t> positions;
  for (size_t i : order) {
    int64_t& position = positions[{calls[i].rank, calls[i].group, calls[i].name}];
    if (!has_seq[i]) calls[i].seq = position;
    ++position;
  }
  return calls;
}

const char* const kNoCollectivesNote =
    "no collectives: no NCCL kernels, record_param_comms, gloo: or nccl: operators in the trace";

CollectiveAnalysis AnalyzeCollectives(const Trace& trace) {
  const std::vector<int32_t> rank_of_track = RankOfTrack(trace);
  return AnalyzeCollectiveCalls(CollectiveCalls(trace, rank_of_track), RanksOf(rank_of_track),
                                kNoCollectivesNote);
}

std::vector<std::map<int32_t, int64_t>> MatchedCollectiveEnds(
    const std::vector<CollectiveCall>& calls, size_t rank_count) {
  std::map<std::tuple<std::string, std::string, int64_t>, std::map<int32_t, int64_t>> by_key;
  std::map<std::tuple<std::string, std::string, int64_t>, size_t> count;
  for (const CollectiveCall& c : calls) {
    auto key = std::make_tuple(c.group, c.name, c.seq);
    by_key[key][c.rank] = c.end;
    ++count[key];
  }
  std::vector<std::map<int32_t, int64_t>> out;
  for (auto& [key, ends] : by_key) {
    if (ends.size() == rank_count && count[key] == rank_count) out.push_back(ends);
  }
  return out;
}

CollectiveAnalysis AnalyzeCollectiveCalls(const std::vector<CollectiveCall>& calls,
                                          const std::vector<int32_t>& ranks,
                                          const std::string& no_calls_note) {
  CollectiveAnalysis out;
  out.calls.columns = {"group", "name",     "seq",          "rank", "start",
                       "end",   "duration", "arrival_skew", "wait", "last"};
  out.ranks.columns = {
      "rank",      "collectives", "last_arrivals", "mean_arrival_skew", "max_arrival_skew",
      "total_wait"};
  // Matched by (group, name, seq); a collective some rank never called is left out.
  std::map<std::tuple<std::string, std::string, int64_t>, std::vector<size_t>> matched;
  for (size_t i = 0; i < calls.size(); ++i)
    matched[{calls[i].group, calls[i].name, calls[i].seq}].push_back(i);
  struct PerRank {
    int64_t collectives = 0, last = 0, skew_sum = 0, skew_max = 0, wait = 0;
  };
  std::map<int32_t, PerRank> per_rank;
  for (int32_t r : ranks) per_rank[r];
  size_t incomplete = 0;
  std::vector<std::vector<size_t>> complete;
  for (auto& [key, members] : matched) {
    std::sort(members.begin(), members.end(),
              [&](size_t a, size_t b) { return calls[a].rank < calls[b].rank; });
    bool one_per_rank = members.size() == ranks.size();
    for (size_t k = 1; one_per_rank && k < members.size(); ++k)
      one_per_rank = calls[members[k]].rank != calls[members[k - 1]].rank;
    if (!one_per_rank) {
      ++incomplete;
      continue;
    }
    complete.push_back(members);
  }
  // In time order of the first arrival.
  std::sort(complete.begin(), complete.end(), [&](const auto& a, const auto& b) {
    int64_t ta = INT64_MAX, tb = INT64_MAX;
    for (size_t i : a) ta = std::min(ta, calls[i].ts);
    for (size_t i : b) tb = std::min(tb, calls[i].ts);
    return ta < tb;
  });
  for (const std::vector<size_t>& members : complete) {
    int64_t first = INT64_MAX, last = INT64_MIN;
    size_t last_member = members.front();
    for (size_t i : members) {
      first = std::min(first, calls[i].ts);
      if (calls[i].ts > last) {
        last = calls[i].ts;
        last_member = i;
      }
    }
    for (size_t i : members) {
      const CollectiveCall& c = calls[i];
      const int64_t skew = c.ts - first, wait = last - c.ts;
      PerRank& p = per_rank[c.rank];
      ++p.collectives;
      p.skew_sum += skew;
      p.skew_max = std::max(p.skew_max, skew);
      p.wait += wait;
      if (i == last_member && members.size() > 1) ++p.last;
      out.calls.rows.push_back({Cell::Text(c.group), Cell::Text(c.name), Cell::Int(c.seq),
                                Cell::Int(c.rank), Cell::Fixed(c.ts / 1000.0, 3),
                                Cell::Fixed(c.end / 1000.0, 3),
                                Cell::Fixed((c.end - c.ts) / 1000.0, 3),
                                Cell::Fixed(skew / 1000.0, 3), Cell::Fixed(wait / 1000.0, 3),
                                Cell::Int(i == last_member && members.size() > 1 ? 1 : 0)});
    }
  }
  std::vector<std::pair<int32_t, PerRank>> order(per_rank.begin(), per_rank.end());
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second.last > b.second.last; });
  for (const auto& [rank, p] : order) {
    out.ranks.rows.push_back(
        {Cell::Int(rank), Cell::Int(p.collectives), Cell::Int(p.last),
         Cell::Fixed(p.collectives ? p.skew_sum / 1000.0 / static_cast<double>(p.collectives) : 0,
                     3),
         Cell::Fixed(p.skew_max / 1000.0, 3), Cell::Fixed(p.wait / 1000.0, 3)});
  }
  if (!order.empty() && order.front().second.last > 0) out.straggler = order.front().first;
  if (calls.empty()) {
    out.calls.notes.push_back(no_calls_note);
  } else if (ranks.size() < 2) {
    out.calls.notes.push_back("one rank only: load the job's ranks together (profsh.load_ranks)");
  }
  if (incomplete > 0) {
    out.calls.notes.push_back(std::to_string(incomplete) +
                              " collective(s) not called exactly once by every rank were left out");
  }
  return out;
}

AnalysisRows ConcatRankRows(std::vector<AnalysisRows> results, const std::vector<int32_t>& ranks) {
  // A rank with two devices has a device column the others lack.
  AnalysisRows out;
  out.columns.push_back("rank");
  for (const AnalysisRows& r : results) {
    for (const std::string& c : r.columns) {
      if (std::find(out.columns.begin(), out.columns.end(), c) == out.columns.end())
        out.columns.push_back(c);
    }
  }
  for (size_t k = 0; k < results.size(); ++k) {
    AnalysisRows& r = results[k];
    std::vector<size_t> place(r.columns.size());
    for (size_t c = 0; c < r.columns.size(); ++c)
      place[c] = static_cast<size_t>(
          std::find(out.columns.begin(), out.columns.end(), r.columns[c]) - out.columns.begin());
    const bool has_rank = r.Column("rank") != SIZE_MAX;
    for (size_t i = 0; i < r.rows.size(); ++i) {
      std::vector<Cell> row(out.columns.size(), Cell::Empty());
      if (!has_rank) row[0] = Cell::Int(ranks[k]);
      for (size_t c = 0; c < r.columns.size(); ++c) row[place[c]] = r.rows.cell(i, c);
      out.rows.push_back(row);
    }
    for (const std::string& note : r.notes)
      out.notes.push_back("rank " + std::to_string(ranks[k]) + ": " + note);
  }
  return out;
}

AnalysisRows CrossRankView(const AnalysisRows& rows) {
  AnalysisRows out;
  const size_t rank_col = rows.Column("rank");
  if (rank_col == SIZE_MAX) {
    out = rows.Select([&] {
      std::vector<uint32_t> all(rows.rows.size());
      for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint32_t>(i);
      return all;
    }());
    out.notes.push_back("no rank column: the rows are shown as they are");
    return out;
  }
  // Key columns: text ones (and the rank-independent integers named as keys by HTA: stream).
  std::vector<size_t> keys, values;
  for (size_t c = 0; c < rows.columns.size(); ++c) {
    if (c == rank_col) continue;
    bool numeric = rows.rows.size() > 0;
    for (size_t r = 0; r < rows.rows.size() && numeric; ++r) {
      const Cell cell = rows.rows.cell(r, c);
      numeric = cell.kind == Cell::Kind::kInt || cell.kind == Cell::Kind::kDouble ||
                cell.kind == Cell::Kind::kEmpty;
    }
    const bool key_like = rows.columns[c] == "stream" || rows.columns[c] == "step" ||
                          rows.columns[c] == "seq" || rows.columns[c] == "device";
    (numeric && !key_like ? values : keys).push_back(c);
  }
  for (size_t k : keys) out.columns.push_back(rows.columns[k]);
  out.columns.push_back("ranks");
  for (size_t v : values) {
    for (const char* suffix : {"_min", "_median", "_max", "_max_rank"})
      out.columns.push_back(rows.columns[v] + suffix);
  }
  std::map<std::string, std::vector<size_t>> groups;
  std::vector<std::string> order;
  for (size_t r = 0; r < rows.rows.size(); ++r) {
    std::string key;
    for (size_t k : keys) key += rows.rows.cell(r, k).Format() + '\x1f';
    auto [it, fresh] = groups.emplace(key, std::vector<size_t>{});
    if (fresh) order.push_back(key);
    it->second.push_back(r);
  }
  for (const std::string& key : order) {
    const std::vector<size_t>& members = groups[key];
    std::vector<Cell> row;
    for (size_t k : keys) row.push_back(rows.rows.cell(members.front(), k));
    std::vector<int64_t> distinct;
    for (size_t r : members) distinct.push_back(rows.rows.cell(r, rank_col).int_value);
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    row.push_back(Cell::Int(static_cast<int64_t>(distinct.size())));
    for (size_t v : values) {
      std::vector<std::pair<double, int64_t>> xs;  // value, rank
      bool all_int = true;
      for (size_t r : members) {
        const Cell c = rows.rows.cell(r, v);
        if (c.kind == Cell::Kind::kEmpty) continue;
        all_int = all_int && c.kind == Cell::Kind::kInt;
        const double x =
            c.kind == Cell::Kind::kInt ? static_cast<double>(c.int_value) : c.double_value;
        xs.emplace_back(x, rows.rows.cell(r, rank_col).int_value);
      }
      if (xs.empty()) {
        for (int i = 0; i < 4; ++i) row.push_back(Cell::Empty());
        continue;
      }
      std::vector<double> sorted;
      for (const auto& [x, r] : xs) sorted.push_back(x);
      std::sort(sorted.begin(), sorted.end());
      const size_t n = sorted.size();
      const double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
      // The lowest rank among those with the maximum.
      auto max_it = std::max_element(xs.begin(), xs.end(), [](const auto& a, const auto& b) {
        return a.first < b.first || (a.first == b.first && a.second > b.second);
      });
      auto cell = [&](double x) {
        return all_int && x == std::floor(x) ? Cell::Int(static_cast<int64_t>(x)) : Cell::Double(x);
      };
      row.push_back(cell(sorted.front()));
      row.push_back(cell(median));
      row.push_back(cell(sorted.back()));
      row.push_back(Cell::Int(max_it->second));
    }
    out.rows.push_back(row);
  }
  out.notes = rows.notes;
  return out;
}

}  // namespace profsh
