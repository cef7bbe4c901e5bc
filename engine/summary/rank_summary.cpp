#include "engine/summary/rank_summary.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "engine/analysis/gpu_analyses.h"
#include "engine/analysis/model/collective_args.h"
#include "engine/analysis/model/event_model.h"
#include "engine/analysis/tensorboard/step_breakdown.h"
#include "engine/trace/kineto_schema.h"

namespace profsh {

namespace {

// Events as load_ranks counts them: it drops each file's process name, label and sort-order
// events (it writes its own).
size_t EventsAsLoadRanksCounts(const Trace& t) {
  const uint32_t name = t.strings.Find(kineto::kProcessName).value_or(UINT32_MAX);
  const uint32_t labels = t.strings.Find(kineto::kProcessLabels).value_or(UINT32_MAX);
  const uint32_t sort = t.strings.Find(kineto::kProcessSortIndex).value_or(UINT32_MAX);
  size_t n = 0;
  for (size_t i = 0; i < t.events.size(); ++i) {
    if (t.events.phase(i) == 'M') {
      const uint32_t e = t.events.name(i);
      if (e == name || e == labels || e == sort) continue;
    }
    ++n;
  }
  return n;
}

// ProfilerStep#N as load_ranks' step alignment reads them: each number's earliest start (and
// here its latest end).
std::vector<SummaryStep> StepsOf(const Trace& t) {
  std::map<int64_t, SummaryStep> by_number;
  for (const StepRange& s : ModelOf(t).ids().steps) {
    const int64_t ts = t.events.ts(s.event), end = t.events.end(s.event);
    auto [it, fresh] = by_number.emplace(s.number, SummaryStep{s.number, ts, end});
    if (!fresh) {
      it->second.start_ns = std::min(it->second.start_ns, ts);
      it->second.end_ns = std::max(it->second.end_ns, end);
    }
  }
  std::vector<SummaryStep> steps;
  for (auto& [number, step] : by_number) steps.push_back(step);
  return steps;
}

// The step whose range holds `ts` (steps by start); none between or outside steps.
class StepFinder {
 public:
  explicit StepFinder(const std::vector<SummaryStep>& steps) : order_(steps.size()) {
    for (size_t i = 0; i < steps.size(); ++i) order_[i] = &steps[i];
    std::sort(order_.begin(), order_.end(),
              [](const SummaryStep* a, const SummaryStep* b) { return a->start_ns < b->start_ns; });
  }
  std::optional<int64_t> At(int64_t ts) const {
    auto after = std::upper_bound(order_.begin(), order_.end(), ts,
                                  [](int64_t t, const SummaryStep* s) { return t < s->start_ns; });
    // Steps may nest or overlap in odd traces: the latest-starting step that holds ts.
    for (auto it = after; it != order_.begin();) {
      --it;
      if (ts < (*it)->end_ns) return (*it)->step;
    }
    return std::nullopt;
  }

 private:
  std::vector<const SummaryStep*> order_;
};

struct NameTotals {
  int64_t count = 0;
  double total = 0, max = 0;  // µs
};
using StepTotals = std::map<int64_t, std::unordered_map<std::string_view, NameTotals>>;

void Add(StepTotals& totals, int64_t step, std::string_view name, double us) {
  NameTotals& n = totals[step][name];
  ++n.count;
  n.total += us;
  n.max = std::max(n.max, us);
}

// The `top` names with the most time in each step (ties by name), and how many names each had.
std::vector<SummaryTopEntry> TopOf(const StepTotals& totals, size_t top,
                                   std::vector<SummaryStep>& steps,  // by number
                                   int64_t SummaryStep::*names) {
  std::vector<SummaryTopEntry> out;
  for (const auto& [step, by_name] : totals) {
    std::vector<std::pair<std::string_view, NameTotals>> sorted(by_name.begin(), by_name.end());
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
      return a.second.total != b.second.total ? a.second.total > b.second.total : a.first < b.first;
    });
    auto it = std::lower_bound(steps.begin(), steps.end(), step,
                               [](const SummaryStep& s, int64_t n) { return s.step < n; });
    if (it != steps.end() && it->step == step) (*it).*names = static_cast<int64_t>(sorted.size());
    for (size_t k = 0; k < sorted.size() && k < top; ++k) {
      out.push_back(SummaryTopEntry{step, static_cast<int64_t>(k + 1), std::string(sorted[k].first),
                                    sorted[k].second.count, sorted[k].second.total,
                                    sorted[k].second.max});
    }
  }
  return out;
}

// Operators (the event model's CPU operators) by the step they start in; inclusive time.
StepTotals OperatorTotals(const Trace& t, const StepFinder& steps) {
  const EventModel& model = ModelOf(t);
  StepTotals totals;
  for (size_t i = 0; i < t.events.size(); ++i) {
    if (t.events.phase(i) != 'X' || model.role(i).role != EventRole::kCpuOp) continue;
    const std::optional<int64_t> step = steps.At(t.events.ts(i));
    if (!step) continue;
    Add(totals, *step, t.str(t.events.name(i)),
        static_cast<double>(t.events.end(i) - t.events.ts(i)) / 1000.0);
  }
  return totals;
}

// Kernels by the step their runtime call started in (the temporal breakdown's rule), in HTA's
// microseconds.
StepTotals KernelTotals(const Trace& t, const GpuEvents& g) {
  StepTotals totals;
  for (size_t k = 0; k < g.size(); ++k) {
    if (g.kind[k] != DeviceWorkKind::kKernel || g.launch[k] == GpuEvents::kNone) continue;
    const int64_t launched = g.runtime_ts[g.launch[k]];
    auto after = std::upper_bound(g.steps.begin(), g.steps.end(), launched,
                                  [](int64_t v, const GpuEvents::Step& s) { return v < s.ts; });
    if (after == g.steps.begin()) continue;
    const GpuEvents::Step& s = *(after - 1);
    if (launched >= s.end) continue;
    Add(totals, s.number, t.str(g.name[k]), static_cast<double>(g.end[k] - g.ts[k]));
  }
  return totals;
}

}  // namespace

RankSummary ComputeRankSummary(const Trace& trace, const RankSummaryOptions& options) {
  RankSummary s;
  s.options = options;
  s.format = trace.source_format;
  s.events = EventsAsLoadRanksCounts(trace);
  s.origin_ns = trace.origin_ns;
  s.has_origin = trace.has_origin;
  for (size_t i = 0; i < trace.events.size(); ++i) {
    if (trace.events.phase(i) == 'M') continue;
    const int64_t ts = trace.events.ts(i);
    if (!s.first_event_ns || ts < *s.first_event_ns) s.first_event_ns = ts;
  }
  if (const std::string* info = trace.FindMetadata("distributedInfo")) s.distributed_info = *info;
  s.metadata = trace.metadata;

  s.steps = StepsOf(trace);
  if (!s.steps.empty())
    s.first_step = std::make_pair(s.steps.front().step, s.steps.front().start_ns);
  const StepFinder steps(s.steps);

  // Every track is the rank's, as load_ranks labels a file's processes.
  const std::vector<int32_t> rank_of_track(trace.tracks.size(), options.rank);
  const CollectiveArgs args(trace);
  for (CollectiveSource source : CollectiveSourcesIn(trace)) {
    for (CollectiveCall& c : CollectiveCallsOf(trace, rank_of_track, source)) {
      SummaryCollective sc{source, std::move(c), std::nullopt, std::nullopt, std::nullopt};
      sc.in_bytes = args.InBytes(sc.call.event);
      sc.out_bytes = args.OutBytes(sc.call.event);
      sc.step = steps.At(sc.call.ts);
      s.collectives.push_back(std::move(sc));
    }
  }

  GpuEvents g = BuildGpuEvents(trace);
  g.rank = options.rank;  // the trace may name none (a rank from the file name)
  s.step_operators =
      TopOf(OperatorTotals(trace, steps), options.top_operators, s.steps, &SummaryStep::operators);
  s.step_kernels =
      TopOf(KernelTotals(trace, g), options.top_kernels, s.steps, &SummaryStep::kernels);

  s.analyses.emplace_back("temporal_breakdown", TemporalBreakdown(g, false));
  s.analyses.emplace_back("temporal_breakdown_by_step", TemporalBreakdown(g, true));
  s.analyses.emplace_back("comm_comp_overlap", CommCompOverlap(g));
  const StepBreakdown breakdown = ComputeStepBreakdown(trace);
  s.analyses.emplace_back("step_breakdown", StepBreakdownRows(breakdown));
  s.analyses.emplace_back("step_breakdown_average", StepBreakdownAverageRows(breakdown));
  return s;
}

}  // namespace profsh
