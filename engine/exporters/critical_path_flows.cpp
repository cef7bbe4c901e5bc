#include "engine/exporters/critical_path_flows.h"

#include <algorithm>
#include <string>

#include "engine/analysis/model/event_model.h"
#include "engine/exporters/json_out.h"

namespace profsh {

namespace {

std::string IdentJson(const Trace& t, const Ident& id) {
  std::string text;
  {
    JsonOut j(&text);
    if (id.is_string) {
      j.String(t.str(id.str));
    } else {
      j.Int(id.number);
    }
  }
  return text;
}

// Where an arrow touches a node: its event's track and the node's time.
struct End {
  std::string pid, tid;
  int64_t ts;
};

End EndAt(const CpGraph& g, const JobLayout& job, uint32_t node) {
  const Trace& t = *job.parts[job.node_part[node]].trace;
  const uint32_t event = g.node_event[node];
  const Track& track = t.tracks[t.events.track(event)];
  int64_t ts = g.node_ts[node];
  if (!g.node_is_start[node] && ModelOf(t).role(event).role == EventRole::kDeviceWork)
    ts -= std::min<int64_t>(1000, t.events.dur(event));
  return End{IdentJson(t, track.pid), IdentJson(t, track.tid), ts};
}

}  // namespace

std::vector<ChromeFlow> CriticalPathFlows(const CpGraph& g, const JobLayout& job,
                                          const CpPath& path) {
  std::vector<ChromeFlow> flows;
  auto add = [&](uint32_t from, uint32_t to, int64_t weight, std::string_view type) {
    if (g.node_event[from] == kCpNoEvent || g.node_event[to] == kCpNoEvent) return;
    const End a = EndAt(g, job, from), b = EndAt(g, job, to);
    std::string args;
    {
      JsonOut j(&args);
      j.Raw("\"weight\": ");
      j.Micros(weight);
      j.Raw(", \"type\": ");
      j.String(type);
      j.Raw(", \"critical\": 1");
    }
    flows.push_back(ChromeFlow{a.pid, a.tid, b.pid, b.tid, a.ts, b.ts, "critical_path",
                               "critical_path", std::move(args)});
  };
  for (size_t k = 0; k < path.edges.size(); ++k) {
    const uint32_t e = path.edges[k];
    const uint32_t src = g.edge_src[e], dst = g.edge_dst[e];
    if (job.node_part[dst] == kJobNoPart) {
      // Into a collective's meeting node: drawn with the link out of it.
      if (k + 1 < path.edges.size()) {
        const uint32_t out = path.edges[k + 1];
        add(src, g.edge_dst[out], g.edge_weight[out], "critical_path_collective");
        ++k;
      }
      continue;
    }
    const CpEdgeType type = g.edge_type[e];
    if (type != CpEdgeType::kDependency && type != CpEdgeType::kKernelLaunchDelay &&
        type != CpEdgeType::kSyncDependency)
      continue;
    add(src, dst, g.edge_weight[e], CpEdgeTypeName(type));
  }
  return flows;
}

}  // namespace profsh
