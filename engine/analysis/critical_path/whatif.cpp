#include "engine/analysis/critical_path/whatif.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "engine/analysis/model/event_model.h"

namespace profsh {

namespace {

bool IsCpuRange(EventRole role) {
  return role == EventRole::kCpuOp || role == EventRole::kAnnotation ||
         role == EventRole::kPythonFunction;
}

// Which of a trace's templates a change is about: its role fits and its name matches (the
// matcher is asked once per name).
std::vector<uint8_t> MatchedTemplates(const Trace& trace, const EventModel& model,
                                      const WhatIfChange& change) {
  const auto& templates = trace.events.templates();
  std::vector<uint8_t> matched(templates.size(), 0);
  std::vector<int8_t> by_name(trace.strings.size(), -1);
  for (size_t t = 0; t < templates.size(); ++t) {
    const TemplateRole& r = model.roles().of_template(static_cast<uint32_t>(t));
    bool role_fits = false;
    switch (change.target) {
      case WhatIfChange::Target::kKernel:
        role_fits = r.role == EventRole::kDeviceWork && r.work != DeviceWorkKind::kSync;
        break;
      case WhatIfChange::Target::kOperator:
        role_fits = IsCpuRange(r.role);
        break;
      case WhatIfChange::Target::kSync:
        role_fits = r.role == EventRole::kRuntime;
        break;
      case WhatIfChange::Target::kRank:
        break;
    }
    if (!role_fits) continue;
    int8_t& known = by_name[templates[t].name];
    if (known < 0) known = change.name_matches(trace.str(templates[t].name)) ? 1 : 0;
    matched[t] = static_cast<uint8_t>(known);
  }
  return matched;
}

// The time spans of the matched operators, per track, merged: what an operator's removal takes
// away on the CPU.
class RemovedSpans {
 public:
  RemovedSpans(const Trace& trace, const std::vector<uint8_t>& matched)
      : spans_(trace.tracks.size()) {
    const EventTable& ev = trace.events;
    const auto& column = ev.template_column();
    for (size_t i = 0; i < ev.size(); ++i) {
      if (!matched[column[i]] || ev.phase(i) != 'X') continue;
      spans_[ev.track(i)].emplace_back(ev.ts(i), ev.end(i));
    }
    for (auto& s : spans_) {
      std::sort(s.begin(), s.end());
      std::vector<std::pair<int64_t, int64_t>> merged;
      for (const auto& span : s) {
        if (!merged.empty() && span.first <= merged.back().second) {
          merged.back().second = std::max(merged.back().second, span.second);
        } else {
          merged.push_back(span);
        }
      }
      s = std::move(merged);
    }
  }
  // Whether an event lies inside a removed span on its track.
  bool Covers(const Trace& trace, uint32_t event) const {
    const auto& s = spans_[trace.events.track(event)];
    const int64_t ts = trace.events.ts(event);
    auto it = std::upper_bound(s.begin(), s.end(), std::make_pair(ts, INT64_MAX));
    if (it == s.begin()) return false;
    --it;
    return it->first <= ts && trace.events.end(event) <= it->second;
  }

 private:
  std::vector<std::vector<std::pair<int64_t, int64_t>>> spans_;
};

// Whether device work was launched by a runtime call inside a removed span.
bool LaunchedInside(const Trace& trace, const EventModel& model, const RemovedSpans& spans,
                    uint32_t event) {
  const auto& work = model.ids().device_work.event;
  auto it = std::lower_bound(work.begin(), work.end(), event);
  if (it == work.end() || *it != event) return false;
  const uint32_t runtime =
      FirstCandidate(model.links().RuntimeCandidates(static_cast<size_t>(it - work.begin())));
  return runtime != kNoIndex && spans.Covers(trace, model.ids().runtime.event[runtime]);
}

int64_t Scaled(int64_t weight, double scale) {
  if (weight == kCpRemovedEdge) return weight;
  return static_cast<int64_t>(std::llround(static_cast<double>(weight) * scale));
}

}  // namespace

std::vector<int64_t> WhatIfBaseWeights(const CpGraph& g) {
  std::vector<int64_t> weights = g.edge_weight;
  std::vector<int64_t> awaited_end(g.node_count(), INT64_MIN);  // per waiting call's end node
  bool any = false;
  for (uint32_t e = 0; e < g.edge_count(); ++e) {
    if (g.edge_type[e] != CpEdgeType::kSyncDependency) continue;
    const uint32_t dst = g.edge_dst[e];
    if (g.node_is_start[dst] || g.node_event[dst] == kCpNoEvent) continue;
    awaited_end[dst] = std::max(awaited_end[dst], g.node_ts[g.edge_src[e]]);
    any = true;
  }
  if (!any) return weights;
  for (uint32_t e = 0; e < g.edge_count(); ++e) {
    const uint32_t dst = g.edge_dst[e];
    if (awaited_end[dst] == INT64_MIN || g.edge_type[e] != CpEdgeType::kOperatorKernel ||
        g.edge_event[e] != g.node_event[dst])
      continue;
    weights[e] = std::min(weights[e], std::max<int64_t>(0, g.node_ts[dst] - awaited_end[dst]));
  }
  return weights;
}

Result<std::vector<int64_t>> WhatIfWeights(const CpGraph& g, const JobLayout& job,
                                           const std::vector<WhatIfChange>& changes,
                                           std::span<const int64_t> start,
                                           std::vector<size_t>* edges_per_change) {
  if (!start.empty() && start.size() != g.edge_count())
    return Error{"what-if: " + std::to_string(start.size()) + " starting weights for " +
                 std::to_string(g.edge_count()) + " edges"};
  std::vector<int64_t> weights =
      start.empty() ? WhatIfBaseWeights(g) : std::vector<int64_t>(start.begin(), start.end());
  if (edges_per_change) edges_per_change->assign(changes.size(), 0);
  for (size_t c = 0; c < changes.size(); ++c) {
    const WhatIfChange& change = changes[c];
    if (!(change.scale >= 0) || !std::isfinite(change.scale))
      return Error{"what-if " + change.label + ": the scale must be a number >= 0"};
    const double scale = change.remove ? 0.0 : change.scale;
    size_t touched = 0;
    for (uint16_t p = 0; p < job.parts.size(); ++p) {
      const JobPart& part = job.parts[p];
      if (change.rank >= 0 && part.rank != change.rank) continue;
      const Trace& trace = *part.trace;
      if (change.target == WhatIfChange::Target::kRank) {
        for (uint32_t e = 0; e < g.edge_count(); ++e) {
          if (job.node_part[g.edge_src[e]] != p || job.node_part[g.edge_dst[e]] != p) continue;
          weights[e] = Scaled(weights[e], scale);
          ++touched;
        }
        continue;
      }
      const EventModel& model = ModelOf(trace);
      const std::vector<uint8_t> matched = MatchedTemplates(trace, model, change);
      auto is_matched = [&](uint32_t event) {
        return event != kCpNoEvent && matched[trace.events.template_column()[event]] != 0;
      };
      std::optional<RemovedSpans> spans;
      if (change.target == WhatIfChange::Target::kOperator) spans.emplace(trace, matched);
      for (uint32_t e = 0; e < g.edge_count(); ++e) {
        if (job.EdgePart(g, e) != p) continue;
        const uint32_t event = g.edge_event[e];
        const CpEdgeType type = g.edge_type[e];
        bool hit = false;
        switch (change.target) {
          case WhatIfChange::Target::kKernel:
            hit = type == CpEdgeType::kOperatorKernel && is_matched(event);
            break;
          case WhatIfChange::Target::kOperator: {
            if (type == CpEdgeType::kOperatorKernel && event != kCpNoEvent) {
              const EventRole role = model.role(event).role;
              hit = role == EventRole::kDeviceWork ? LaunchedInside(trace, model, *spans, event)
                                                   : spans->Covers(trace, event);
            } else if (type == CpEdgeType::kKernelLaunchDelay) {
              const uint32_t kernel = g.node_event[g.edge_dst[e]];
              hit = kernel != kCpNoEvent && LaunchedInside(trace, model, *spans, kernel);
            }
            break;
          }
          case WhatIfChange::Target::kSync:
            if (type == CpEdgeType::kSyncDependency) {
              const uint32_t dst = g.edge_dst[e];
              if (!g.node_is_start[dst] && is_matched(g.node_event[dst])) {
                if (change.remove) {
                  weights[e] = kCpRemovedEdge;
                  ++touched;
                }
                continue;
              }
            }
            hit = type == CpEdgeType::kOperatorKernel && is_matched(event);
            break;
          case WhatIfChange::Target::kRank:
            break;
        }
        if (!hit) continue;
        weights[e] = Scaled(weights[e], scale);
        ++touched;
      }
    }
    if (edges_per_change) (*edges_per_change)[c] = touched;
  }
  return weights;
}

Result<WhatIfResult> WhatIf(const CpGraph& graph, const JobLayout& job,
                            const std::vector<WhatIfChange>& changes, uint16_t end_part,
                            std::span<const int64_t> start) {
  WhatIfResult out;
  auto weights = WhatIfWeights(graph, job, changes, start, &out.edges_per_change);
  if (!weights.ok()) return weights.error();
  out.weights = std::move(weights.value());
  const std::vector<int64_t> base = WhatIfBaseWeights(graph);
  for (size_t e = 0; e < out.weights.size(); ++e) out.edges_changed += out.weights[e] != base[e];
  // The baseline is always the unchanged graph's (a what-if on a what-if compares with it too).
  std::optional<SinkedGraph> sinked;
  if (end_part != kJobNoPart) sinked.emplace(WithSinkOnPart(graph, job, end_part));
  auto longest = [&](std::span<const int64_t> weights) {
    return sinked ? PathEndingOnPart(*sinked, weights) : LongestPath(graph, weights);
  };
  Result<CpPath> before = longest(base);
  if (!before.ok()) return before.error();
  out.baseline_ns = before->length_ns;
  Result<CpPath> path = longest(out.weights);
  if (!path.ok()) return path.error();
  out.path = std::move(path.value());
  return out;
}

}  // namespace profsh
