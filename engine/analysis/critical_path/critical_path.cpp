#include "engine/analysis/critical_path/critical_path.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "engine/analysis/critical_path/cp_build.h"
#include "engine/analysis/model/event_model.h"
#include "engine/analysis/ranks.h"

namespace profsh {
CpTimes::CpTimes(const Trace& trace, bool hta_rounding) : trace_(trace) {
  if (!hta_rounding) return;
  const int64_t origin = WrittenOrigin() % 1000;
  for (size_t ev = 0; ev < trace.events.size() && !round_; ++ev)
    round_ = (origin + trace.events.ts(ev)) % 1000 != 0 || trace.events.dur(ev) % 1000 != 0;
}

// The time as the trace file wrote it (after baseTimeNanoseconds when it has one, else since the
// epoch), as a double of µs as json.load reads it (the whole microseconds are exact, the fraction
// rounds once), so that rounding sees what HTA's float arithmetic sees: at 1.7e15 µs a double
// holds quarters of a microsecond, and an end at .9 becomes the next microsecond.
int64_t CpTimes::WrittenOrigin() const {
  return trace_.has_origin ? 0 : trace_.origin_ns;
}

double CpTimes::StartMicros(size_t ev) const {
  const int64_t abs = WrittenOrigin() + trace_.events.ts(ev);
  const int64_t whole = abs >= 0 ? abs / 1000 : -((-abs + 999) / 1000);
  return static_cast<double>(whole) + static_cast<double>(abs - whole * 1000) / 1000.0;
}

int64_t CpTimes::HtaStart(size_t ev) const {
  return static_cast<int64_t>(std::ceil(StartMicros(ev))) * 1000 - WrittenOrigin();
}

int64_t CpTimes::HtaEnd(size_t ev) const {
  const double end = StartMicros(ev) + static_cast<double>(trace_.events.dur(ev)) / 1000.0;
  return static_cast<int64_t>(std::floor(end)) * 1000 - WrittenOrigin();
}

namespace {

constexpr char kNoSyncNote[] =
    "the trace has no CUDA synchronization events (category cuda_sync): the path cannot follow "
    "the CPU's waits for the GPU (cudaStreamSynchronize, cudaEventSynchronize, "
    "cudaDeviceSynchronize) or one stream's wait for another, so it may run through the "
    "waiting call instead of the GPU work it waited for. `profsh run` records them through "
    "CUPTI; torch.profiler records them with "
    "experimental_config=torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True) "
    "(PyTorch 2.1 and later).";

std::string Micros(int64_t ns) {
  return std::to_string(static_cast<double>(ns) / 1000.0);
}

// HTA's window: the annotation's instances (events whose name contains it, in trace order),
// first to last; the whole trace for "". HTA counts them in file order, where Kineto writes the
// device's copies of a step (gpu_user_annotation) after every CPU event; profsh counts the
// CPU-side ones only, so that instance N is the same step in any event order.
Status FindWindow(const Trace& trace, const CpTimes& times, const CriticalPathOptions& options,
                  const std::vector<int32_t>& rank_of_track, std::optional<int32_t> rank,
                  int64_t* start, int64_t* end) {
  const EventTable& events = trace.events;
  *start = INT64_MAX;
  *end = INT64_MIN;
  if (options.annotation.empty()) {
    for (size_t ev = 0; ev < events.size(); ++ev) {
      if ((rank && rank_of_track[events.track(ev)] != *rank) || events.phase(ev) == 'M') continue;
      *start = std::min(*start, times.Ts(ev));
      *end = std::max(*end, times.End(ev));
    }
    if (*start > *end) return Error{"critical_path: the trace has no events"};
    return Status::Ok();
  }
  if (options.first_instance < 0 || options.last_instance < options.first_instance)
    return Error{"critical_path: instance {" + std::to_string(options.first_instance) + ", " +
                 std::to_string(options.last_instance) +
                 "} is not a range of instances (first >= 0, last >= first)"};
  const std::vector<size_t> instances =
      AnnotationInstances(trace, rank_of_track, rank, options.annotation);
  const int64_t instance = static_cast<int64_t>(instances.size());
  for (int64_t i = options.first_instance; i <= options.last_instance && i < instance; ++i) {
    *start = std::min(*start, times.Ts(instances[i]));
    *end = std::max(*end, times.End(instances[i]));
  }
  if (instance == 0)
    return Error{"critical_path: no event's name contains the annotation \"" + options.annotation +
                 "\""};
  if (options.first_instance >= instance)
    return Error{"critical_path: annotation \"" + options.annotation + "\" has " +
                 std::to_string(instance) + " instance(s); instance " +
                 std::to_string(options.first_instance) + " does not exist (they count from 0)"};
  return Status::Ok();
}

}  // namespace

std::vector<size_t> AnnotationInstances(const Trace& trace, const std::vector<int32_t>& rank_of_track,
                                        std::optional<int32_t> rank, std::string_view annotation) {
  const EventTable& events = trace.events;
  const EventModel& model = ModelOf(trace);
  std::vector<int8_t> matches(events.templates().size(), -1);
  std::vector<size_t> instances;
  for (size_t ev = 0; ev < events.size(); ++ev) {
    if (events.phase(ev) != 'X' || (rank && rank_of_track[events.track(ev)] != *rank)) continue;
    if (model.role(ev).role == EventRole::kGpuAnnotation) continue;
    int8_t& m = matches[events.template_column()[ev]];
    if (m < 0) m = trace.str(events.name(ev)).find(annotation) != std::string_view::npos ? 1 : 0;
    if (m) instances.push_back(ev);
  }
  return instances;
}

double CriticalPathMicroseconds(const CpPath& path) {
  return static_cast<double>(path.length_ns) / 1000.0;
}

Result<CriticalPath> AnalyzeCriticalPath(const Trace& trace, const CriticalPathOptions& options) {
  const EventModel& model = ModelOf(trace);
  const std::vector<int32_t> rank_of_track = RankOfTrack(trace);
  const std::vector<int32_t> ranks = RanksOf(rank_of_track);
  CriticalPath cp;
  std::optional<int32_t> rank = options.rank;
  if (rank && std::find(ranks.begin(), ranks.end(), *rank) == ranks.end())
    return Error{"critical_path: the trace has no rank " + std::to_string(*rank)};
  if (!rank && ranks.size() > 1) {
    rank = ranks.front();
    cp.notes.push_back("the trace holds " + std::to_string(ranks.size()) + " ranks; this is rank " +
                       std::to_string(*rank) + " (pass rank = N)");
  }
  cp.rank = rank.value_or(ranks.empty() ? 0 : ranks.front());
  const CpTimes times(trace, options.hta_rounding);
  if (Status s =
          FindWindow(trace, times, options, rank_of_track, rank, &cp.window_start, &cp.window_end);
      !s.ok())
    return Error{s.message()};
  bool any_sync = false;
  for (size_t w = 0; w < model.ids().device_work.size() && !any_sync; ++w)
    any_sync = model.role(model.ids().device_work.event[w]).work == DeviceWorkKind::kSync;
  if (!any_sync && model.ids().device_work.size() > 0) cp.notes.push_back(kNoSyncNote);
  cp.graph = BuildCriticalPathGraph(model, options, rank_of_track, rank, cp.window_start,
                                    cp.window_end, &cp.notes);
  auto path = LongestPath(cp.graph);
  if (!path.ok()) return Error{path.error().message};
  cp.path = std::move(path.value());
  if (cp.graph.node_count() == 0)
    cp.notes.push_back("no operator, runtime call or kernel starts in the window (" +
                       Micros(cp.window_start) + " to " + Micros(cp.window_end) + " µs)");
  return cp;
}

AnalysisRows CriticalPathSummary(const CriticalPath& cp, const CpPath& path) {
  AnalysisRows out;
  out.columns = {"bound_by", "pct", "duration_us"};
  out.notes = cp.notes;
  std::map<std::string_view, int64_t> by_bound;
  int64_t total = 0;
  for (uint32_t e : path.edges) {
    const int64_t w = std::max<int64_t>(cp.graph.edge_weight[e], 0);
    by_bound[CpBoundName(cp.graph.edge_bound[e])] += w;
    total += w;
  }
  for (const auto& [bound, ns] : by_bound) {
    out.rows.push_back(
        {Cell::Text(std::string(bound)),
         Cell::Double(total > 0 ? 100.0 * static_cast<double>(ns) / static_cast<double>(total)
                                : 0.0),
         Cell::Double(static_cast<double>(ns) / 1000.0)});
  }
  return out;
}

namespace {

int64_t IdentNumber(const Trace& trace, const Ident& i) {
  (void)trace;
  return i.is_string ? -1 : i.number;
}

// An event's columns: name, ts, dur (µs), pid, tid, stream.
void EventCells(const Trace& trace, uint32_t ev, std::vector<Cell>* row) {
  if (ev == kCpNoEvent) {
    for (int i = 0; i < 6; ++i) row->push_back(Cell::Empty());
    return;
  }
  const EventTable& events = trace.events;
  const Track& t = trace.tracks[events.track(ev)];
  const EventModel& model = ModelOf(trace);
  int64_t stream = -1;
  if (model.role(ev).role == EventRole::kDeviceWork)
    stream = model.args().Int(ev, KnownArg::kStream).value_or(-1);
  row->push_back(Cell::Text(std::string(trace.str(events.name(ev)))));
  row->push_back(Cell::Double(static_cast<double>(events.ts(ev)) / 1000.0));
  row->push_back(Cell::Double(static_cast<double>(events.dur(ev)) / 1000.0));
  row->push_back(Cell::Int(IdentNumber(trace, t.pid)));
  row->push_back(Cell::Int(IdentNumber(trace, t.tid)));
  row->push_back(Cell::Int(stream));
}

}  // namespace

AnalysisRows CriticalPathBreakdown(const Trace& trace, const CriticalPath& cp, const CpPath& path) {
  AnalysisRows out;
  out.columns = {"edge", "event",  "name", "ts",       "dur",     "pid",
                 "tid",  "stream", "type", "duration", "bound_by"};
  out.notes = cp.notes;
  for (uint32_t e : path.edges) {
    std::vector<Cell> row;
    const uint32_t ev = cp.graph.edge_event[e];
    row.push_back(Cell::Int(e));
    row.push_back(ev == kCpNoEvent ? Cell::Empty() : Cell::Int(ev));
    EventCells(trace, ev, &row);
    row.push_back(Cell::Text(std::string(CpEdgeTypeName(cp.graph.edge_type[e]))));
    row.push_back(Cell::Double(static_cast<double>(cp.graph.edge_weight[e]) / 1000.0));
    row.push_back(Cell::Text(std::string(CpBoundName(cp.graph.edge_bound[e]))));
    out.rows.push_back(row);
  }
  return out;
}

AnalysisRows CriticalPathNodes(const Trace& trace, const CriticalPath& cp,
                               std::span<const uint32_t> nodes) {
  AnalysisRows out;
  out.columns = {"node",     "event",     "name", "ts",  "is_start",
                 "event_ts", "event_dur", "pid",  "tid", "stream"};
  for (uint32_t n : nodes) {
    std::vector<Cell> row{Cell::Int(n), Cell::Int(cp.graph.node_event[n])};
    std::vector<Cell> event;
    EventCells(trace, cp.graph.node_event[n], &event);
    row.push_back(event[0]);
    row.push_back(Cell::Double(static_cast<double>(cp.graph.node_ts[n]) / 1000.0));
    row.push_back(Cell::Int(cp.graph.node_is_start[n]));
    row.insert(row.end(), event.begin() + 1, event.end());
    out.rows.push_back(row);
  }
  return out;
}

AnalysisRows CriticalPathEdges(const Trace& trace, const CriticalPath& cp, const CpPath& path,
                               bool only_path) {
  AnalysisRows out;
  out.columns = {"edge", "src", "dst", "type", "weight", "event", "name", "bound_by", "on_path"};
  std::vector<uint8_t> on_path(cp.graph.edge_count(), 0);
  for (uint32_t e : path.edges) on_path[e] = 1;
  auto add = [&](uint32_t e) {
    const uint32_t ev = cp.graph.edge_event[e];
    out.rows.push_back(
        {Cell::Int(e), Cell::Int(cp.graph.edge_src[e]), Cell::Int(cp.graph.edge_dst[e]),
         Cell::Text(std::string(CpEdgeTypeName(cp.graph.edge_type[e]))),
         Cell::Double(static_cast<double>(cp.graph.edge_weight[e]) / 1000.0),
         ev == kCpNoEvent ? Cell::Empty() : Cell::Int(ev),
         ev == kCpNoEvent ? Cell::Empty()
                          : Cell::Text(std::string(trace.str(trace.events.name(ev)))),
         Cell::Text(std::string(CpBoundName(cp.graph.edge_bound[e]))), Cell::Int(on_path[e])});
  };
  if (only_path) {
    for (uint32_t e : path.edges) add(e);
  } else {
    for (uint32_t e = 0; e < cp.graph.edge_count(); ++e) add(e);
  }
  return out;
}

}  // namespace profsh
