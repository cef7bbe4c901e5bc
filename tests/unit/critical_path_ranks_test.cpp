// The critical path across ranks and what-if, on hand-made graphs over a two-rank trace whose
// answer is known: rank 1 is late to an all-reduce, so rank 0's path runs through rank 1's
// operator; removing that operator makes rank 0's own work the path (docs/ANALYSIS.md, "Critical
// path across ranks", "What-if").
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "engine/analysis/critical_path/cp_worker_collectives.h"
#include "engine/analysis/critical_path/cross_rank.h"
#include "engine/analysis/critical_path/whatif.h"
#include "engine/analysis/ranks.h"
#include "engine/exporters/critical_path_flows.h"
#include "test_util.h"

namespace profsh {
namespace {

// Rank 0: aten::mm [0, 100] launches an all-reduce kernel that starts at 110 and waits for rank
// 1 until 430; cudaStreamSynchronize [120, 440] waits for it, then aten::add [445, 455].
// Rank 1: aten::index_put_ [0, 400] (the straggler's work), its all-reduce kernel [410, 430].
const char kLateRank[] = R"json({"traceEvents": [
  {"ph": "M", "name": "process_labels", "pid": 10, "args": {"labels": "rank 0"}},
  {"ph": "M", "name": "process_labels", "pid": 11, "args": {"labels": "rank 1"}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 1, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 10,
   "tid": 7, "ts": 110, "dur": 320},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 10, "tid": 1,
   "ts": 120, "dur": 320},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 10, "tid": 1, "ts": 445, "dur": 10},
  {"ph": "X", "cat": "cpu_op", "name": "aten::index_put_", "pid": 11, "tid": 1, "ts": 0,
   "dur": 400},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 11,
   "tid": 7, "ts": 410, "dur": 20}
]})json";

uint32_t EventOf(const Trace& t, std::string_view name, int64_t pid) {
  for (uint32_t i = 0; i < t.events.size(); ++i)
    if (t.str(t.events.name(i)) == name && t.tracks[t.events.track(i)].pid.number == pid) return i;
  ADD_FAILURE() << name << " not in the trace";
  return 0;
}

struct Nodes {
  uint32_t start, end;
};
Nodes AddSpan(CpGraph& g, const Trace& t, uint32_t event) {
  const uint32_t s = g.AddNode(t.events.ts(event), event, true);
  const uint32_t e = g.AddNode(t.events.end(event), event, false);
  g.AddEdge(s, e, CpEdgeType::kOperatorKernel, t.events.dur(event), event);
  return {s, e};
}

// The graphs HTA's rules give these events (an operator, its kernel's launch delay, the kernel;
// on rank 0 the sync's wait and the next operator).
std::vector<RankGraphInput> Graphs(const Trace& t) {
  std::vector<RankGraphInput> ranks(2);
  {
    CpGraph& g = ranks[0].graph;
    const Nodes mm = AddSpan(g, t, EventOf(t, "aten::mm", 10));
    const Nodes k = AddSpan(g, t, EventOf(t, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", 10));
    g.AddEdge(mm.end, k.start, CpEdgeType::kKernelLaunchDelay, 10000);
    const Nodes sync = AddSpan(g, t, EventOf(t, "cudaStreamSynchronize", 10));
    g.AddEdge(mm.end, sync.start, CpEdgeType::kDependency, 0);
    g.AddEdge(k.end, sync.end, CpEdgeType::kSyncDependency, 0);
    const Nodes add = AddSpan(g, t, EventOf(t, "aten::add", 10));
    g.AddEdge(sync.end, add.start, CpEdgeType::kDependency, 0);
  }
  {
    CpGraph& g = ranks[1].graph;
    const Nodes put = AddSpan(g, t, EventOf(t, "aten::index_put_", 11));
    const Nodes k = AddSpan(g, t, EventOf(t, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", 11));
    g.AddEdge(put.end, k.start, CpEdgeType::kKernelLaunchDelay, 10000);
  }
  for (int r = 0; r < 2; ++r) {
    ranks[r].rank = r;
    ranks[r].trace = &t;
  }
  return ranks;
}

// Times are in ns (the trace's µs times 1000).

// The names of the events the path's edges are attributed to, with their rank.
std::vector<std::string> Attributed(const CpGraph& g, const JobLayout& job, const Trace& t,
                                    const CpPath& path) {
  std::vector<std::string> out;
  for (uint32_t e : path.edges) {
    if (g.edge_event[e] == kCpNoEvent || g.edge_weight[e] == 0) continue;
    out.push_back(std::to_string(job.parts[job.EdgePart(g, e)].rank) + ":" +
                  std::string(t.str(t.events.name(g.edge_event[e]))));
  }
  return out;
}

WhatIfChange Change(WhatIfChange::Target target, std::string name, double scale, bool remove,
                    int32_t rank = -1) {
  WhatIfChange c;
  c.target = target;
  c.name_matches = [name](std::string_view n) { return n.find(name) != std::string_view::npos; };
  c.scale = scale;
  c.remove = remove;
  c.rank = rank;
  c.label = name;
  return c;
}

TEST(CriticalPathRanks, PathCrossesToTheLateRankAtTheCollective) {
  auto trace = testing::MustImport(kLateRank);
  JobGraph job = LinkRanks(Graphs(*trace));
  EXPECT_EQ(job.layout.linked_collectives, 1u);
  EXPECT_EQ(job.layout.unlinked_collectives, 0u);
  // Alone, rank 0's path is its own: aten::mm, the launch, the kernel's 320 µs (mostly waiting).
  // Linked, its kernel ends 20 after rank 1 arrived at 410: the path runs through rank 1.
  auto p = PathEndingOnPart(WithSinkOnPart(job.graph, job.layout, 0), {});
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->length_ns, 440000);
  EXPECT_EQ(
      Attributed(job.graph, job.layout, *trace, *p),
      (std::vector<std::string>{"1:aten::index_put_",
                                "0:ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "0:aten::add"}));
  // Rank 0's wait left its own kernel edge: 320 - 300.
  const uint32_t k0 = EventOf(*trace, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", 10);
  for (uint32_t e = 0; e < job.graph.edge_count(); ++e) {
    if (job.graph.edge_event[e] == k0 && job.layout.node_part[job.graph.edge_src[e]] == 0) {
      EXPECT_EQ(job.graph.edge_weight[e], 20000);
    }
  }
}

TEST(CriticalPathRanks, RemovingTheOnlyBottleneckShowsTheNext) {
  auto trace = testing::MustImport(kLateRank);
  JobGraph job = LinkRanks(Graphs(*trace));
  auto r = WhatIf(job.graph, job.layout,
                  {Change(WhatIfChange::Target::kOperator, "aten::index_put_", 1, true)}, 0);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->edges_per_change, (std::vector<size_t>{1}));
  // Rank 1 now arrives at 10: rank 0's own aten::mm (100) + launch (10) + the all-reduce after
  // the last arrival (20) + aten::add (10).
  EXPECT_EQ(r->path.length_ns, 140000);
  EXPECT_EQ(Attributed(job.graph, job.layout, *trace, r->path),
            (std::vector<std::string>{"0:aten::mm", "0:ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)",
                                      "0:aten::add"}));
  // The graph itself is unchanged.
  auto again = PathEndingOnPart(WithSinkOnPart(job.graph, job.layout, 0), {});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->length_ns, 440000);
}

TEST(CriticalPathRanks, WhatIfScalesKernelsAndRanksAndDropsSyncs) {
  auto trace = testing::MustImport(kLateRank);
  JobGraph job = LinkRanks(Graphs(*trace));
  // The all-reduce kernels twice as fast: 20 -> 10 after the last arrival.
  auto k = WhatIf(job.graph, job.layout,
                  {Change(WhatIfChange::Target::kKernel, "ncclDev", 0.5, false)}, 0);
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->path.length_ns, 430000);
  // Rank 1 10% faster: 360 + 9 + 20 + 10.
  WhatIfChange rank1 = Change(WhatIfChange::Target::kRank, "", 0.9, false, 1);
  auto r = WhatIf(job.graph, job.layout, {rank1}, 0);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->path.length_ns, 399000);
  // Without the sync's wait, aten::add no longer waits for the all-reduce: rank 0's path ends
  // at its kernel's end (430).
  auto s = WhatIf(job.graph, job.layout,
                  {Change(WhatIfChange::Target::kSync, "cudaStreamSynchronize", 1, true)}, 0);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->path.length_ns, 430000);
  EXPECT_EQ(Attributed(job.graph, job.layout, *trace, s->path),
            (std::vector<std::string>{"1:aten::index_put_",
                                      "0:ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)"}));
  // Changes compose; a scale below 0 is an error naming the change.
  auto both = WhatIf(job.graph, job.layout,
                     {Change(WhatIfChange::Target::kOperator, "aten::index_put_", 1, true),
                      Change(WhatIfChange::Target::kOperator, "aten::mm", 0.5, false)},
                     0);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->path.length_ns, 90000);
  auto bad = WhatIf(job.graph, job.layout, {Change(WhatIfChange::Target::kKernel, "x", -1, false)});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("scale"), std::string::npos);
}

TEST(CriticalPathRanks, FlowsDrawTheLinkFromTheLastArrival) {
  auto trace = testing::MustImport(kLateRank);
  JobGraph job = LinkRanks(Graphs(*trace));
  auto p = PathEndingOnPart(WithSinkOnPart(job.graph, job.layout, 0), {});
  ASSERT_TRUE(p.ok());
  const std::vector<ChromeFlow> flows = CriticalPathFlows(job.graph, job.layout, *p);
  // The launch on rank 1, the link from rank 1's kernel start to rank 0's kernel end, the sync,
  // the dependency to aten::add.
  ASSERT_EQ(flows.size(), 4u);
  EXPECT_EQ(flows[1].from_pid, "11");
  EXPECT_EQ(flows[1].to_pid, "10");
  EXPECT_EQ(flows[1].from_ts, 410000);
  EXPECT_NE(flows[1].args.find("critical_path_collective"), std::string::npos);
}

// A gloo job: each rank's c10d::allreduce_ hands the all-reduce to gloo's thread (tid 5), whose
// gloo:all_reduce range HTA's graph leaves out; the calling thread waits for it, then aten::add.
// Rank 0: aten::mm [0, 90], c10d::allreduce_ [95, 105], gloo:all_reduce [110, 450] (waiting for
// rank 1 until 415), aten::add [460, 470]. Rank 1: aten::index_put_ [0, 400] (the straggler's
// work), c10d::allreduce_ [400, 410], gloo:all_reduce [415, 450], aten::add [455, 465].
const char kGlooLateRank[] = R"json({"traceEvents": [
  {"ph": "M", "name": "process_labels", "pid": 10, "args": {"labels": "rank 0"}},
  {"ph": "M", "name": "process_labels", "pid": 11, "args": {"labels": "rank 1"}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 1, "ts": 0, "dur": 90},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 10, "tid": 1, "ts": 95,
   "dur": 10},
  {"ph": "X", "cat": "user_annotation", "name": "gloo:all_reduce", "pid": 10, "tid": 5,
   "ts": 110, "dur": 340},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 10, "tid": 1, "ts": 460, "dur": 10},
  {"ph": "X", "cat": "cpu_op", "name": "aten::index_put_", "pid": 11, "tid": 1, "ts": 0,
   "dur": 400},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 11, "tid": 1, "ts": 400,
   "dur": 10},
  {"ph": "X", "cat": "user_annotation", "name": "gloo:all_reduce", "pid": 11, "tid": 5,
   "ts": 415, "dur": 35},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 11, "tid": 1, "ts": 455, "dur": 10}
]})json";

// HTA's graph of each rank: the operators on the calling thread, one after another (weight-0
// dependencies between top-level operators); nothing of gloo's thread.
// `rank0_relu`: rank 0's thread also runs an aten::relu while gloo's thread works.
std::vector<RankGraphInput> GlooGraphs(const Trace& t, bool rank0_relu = false) {
  std::vector<RankGraphInput> ranks(2);
  const std::vector<std::vector<const char*>> ops = {
      rank0_relu
          ? std::vector<const char*>{"aten::mm", "c10d::allreduce_", "aten::relu", "aten::add"}
          : std::vector<const char*>{"aten::mm", "c10d::allreduce_", "aten::add"},
      {"aten::index_put_", "c10d::allreduce_", "aten::add"}};
  for (int r = 0; r < 2; ++r) {
    CpGraph& g = ranks[r].graph;
    uint32_t last = UINT32_MAX;
    for (const char* op : ops[r]) {
      const Nodes n = AddSpan(g, t, EventOf(t, op, 10 + r));
      if (last != UINT32_MAX) g.AddEdge(last, n.start, CpEdgeType::kDependency, 0);
      last = n.end;
    }
    ranks[r].rank = r;
    ranks[r].trace = &t;
  }
  return ranks;
}

TEST(CriticalPathRanks, GlooRangesOnWorkerThreadsAreLinked) {
  auto trace = testing::MustImport(kGlooLateRank);
  JobGraph job = LinkRanks(GlooGraphs(*trace));
  EXPECT_EQ(job.layout.worker_collectives, 2u);
  EXPECT_EQ(job.layout.worker_collectives_waited, 2u);
  EXPECT_EQ(job.layout.linked_collectives, 1u);
  EXPECT_EQ(job.layout.calls_outside_graph, 0u);
  // Rank 0's path: rank 1's aten::index_put_ (400) and its hand-off to gloo's thread (415 -
  // 400), rank 0's all-reduce after the last arrival (450 - 415), the wait into aten::add (0),
  // aten::add (10). Without gloo's ranges it would be rank 0's own 90 + 10 + 10.
  auto p = PathEndingOnPart(WithSinkOnPart(job.graph, job.layout, 0), {});
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->length_ns, 460000);
  EXPECT_EQ(Attributed(job.graph, job.layout, *trace, *p),
            (std::vector<std::string>{"1:aten::index_put_", "1:c10d::allreduce_",
                                      "0:gloo:all_reduce", "0:aten::add"}));
  // Rank 0's own gloo:all_reduce edge lost its wait (415 - 110 of 340).
  const uint32_t g0 = EventOf(*trace, "gloo:all_reduce", 10);
  size_t own = 0;
  for (uint32_t e = 0; e < job.graph.edge_count(); ++e) {
    if (job.graph.edge_event[e] != g0 || job.layout.node_part[job.graph.edge_src[e]] != 0) continue;
    ++own;
    EXPECT_EQ(job.graph.edge_weight[e], 35000);
    EXPECT_EQ(job.graph.edge_bound[e], CpBound::kCpuCommunication);
  }
  EXPECT_EQ(own, 1u);
  // Without aten::index_put_, rank 1 arrives first (at 15 on the path) and rank 0's own work is
  // the path: aten::mm 90, its hand-off 15, the all-reduce's 35, aten::add 10.
  auto r = WhatIf(job.graph, job.layout,
                  {Change(WhatIfChange::Target::kOperator, "aten::index_put_", 1, true)}, 0);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->path.length_ns, 150000);
  EXPECT_EQ(Attributed(job.graph, job.layout, *trace, r->path),
            (std::vector<std::string>{"0:aten::mm", "0:c10d::allreduce_", "0:gloo:all_reduce",
                                      "0:aten::add"}));
}

TEST(CriticalPathRanks, AThreadThatWentOnDoesNotWaitForItsGlooRange) {
  // Rank 0's thread runs aten::relu [200, 210] while gloo's thread works (an async_op call): it
  // did not wait, so nothing ties aten::add to the range's end, and the path ending on rank 0
  // ends at the range's end instead of going on into aten::add.
  std::string json = kGlooLateRank;
  const std::string add = R"({"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 10,)";
  json.insert(json.find(add), R"({"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 10,
    "tid": 1, "ts": 200, "dur": 10},
  )");
  auto trace = testing::MustImport(json);
  JobGraph job = LinkRanks(GlooGraphs(*trace, true));
  EXPECT_EQ(job.layout.worker_collectives, 2u);
  EXPECT_EQ(job.layout.worker_collectives_waited, 1u);
  EXPECT_EQ(job.layout.linked_collectives, 1u);
  auto p = PathEndingOnPart(WithSinkOnPart(job.graph, job.layout, 0), {});
  ASSERT_TRUE(p.ok()) << p.error().message;
  // Rank 1's 415 up to its range's start, then 35 after the last arrival.
  EXPECT_EQ(p->length_ns, 450000);
  EXPECT_EQ(
      Attributed(job.graph, job.layout, *trace, *p),
      (std::vector<std::string>{"1:aten::index_put_", "1:c10d::allreduce_", "0:gloo:all_reduce"}));
}

// One rank's calling thread (tid 1) and gloo's thread (tid 5): `ops` are the calling thread's
// operators, chained by weight-0 dependencies as HTA's graph chains top-level operators; the
// worker ranges get added by AddWorkerCollectives.
struct OneRank {
  std::unique_ptr<Trace> trace;
  CpGraph graph;
  WorkerCollectiveCounts counts;
};
OneRank AddRangesTo(const std::string& events,
                    const std::vector<std::pair<const char*, int64_t>>& ops) {
  OneRank r;
  r.trace = testing::MustImport(
      R"({"traceEvents": [{"ph": "M", "name": "process_labels", "pid": 10, "args": {"labels": "rank 0"}},)" +
      events + "]}");
  const Trace& t = *r.trace;
  uint32_t last = UINT32_MAX;
  for (const auto& [name, ts] : ops) {
    uint32_t event = UINT32_MAX;
    for (uint32_t i = 0; i < t.events.size(); ++i)
      if (t.str(t.events.name(i)) == name && t.events.ts(i) == ts * 1000) event = i;
    EXPECT_NE(event, UINT32_MAX) << name << " at " << ts;
    const Nodes n = AddSpan(r.graph, t, event);
    if (last != UINT32_MAX) r.graph.AddEdge(last, n.start, CpEdgeType::kDependency, 0);
    last = n.end;
  }
  const std::vector<int32_t> rank_of_track = RankOfTrack(t);
  const std::vector<CollectiveCall> calls = CollectiveCalls(t, rank_of_track);
  const std::vector<CollectiveCall> issuers = CollectiveIssuers(t, rank_of_track);
  r.counts = AddWorkerCollectives(r.graph, t, 0, calls, issuers);
  return r;
}

std::string Op(const char* cat, const char* name, int tid, int64_t ts, int64_t dur) {
  return std::string(R"({"ph": "X", "cat": ")") + cat + R"(", "name": ")" + name +
         R"(", "pid": 10, "tid": )" + std::to_string(tid) + R"(, "ts": )" + std::to_string(ts) +
         R"(, "dur": )" + std::to_string(dur) + "}";
}

TEST(CriticalPathRanks, QueuedGlooCallsPairWithTheirIssuersInOrder) {
  // Two all-reduces issued before gloo ran the first (DDP's buckets): c1 [0, 10] and c2
  // [20, 30]; gloo runs r1 [40, 100] and r2 [100, 160]; the thread then waits into aten::add.
  OneRank r = AddRangesTo(Op("cpu_op", "c10d::allreduce_", 1, 0, 10) + "," +
                              Op("cpu_op", "c10d::allreduce_", 1, 20, 10) + "," +
                              Op("user_annotation", "gloo:all_reduce", 5, 40, 60) + "," +
                              Op("user_annotation", "gloo:all_reduce", 5, 100, 60) + "," +
                              Op("cpu_op", "aten::add", 1, 170, 10),
                          {{"c10d::allreduce_", 0}, {"c10d::allreduce_", 20}, {"aten::add", 170}});
  EXPECT_EQ(r.counts.joined, 2u);
  // Each issuer hands over to its own range: c1 (0) to r1 (40), c2 (20) to r2 (100).
  std::vector<std::pair<int64_t, int64_t>> handoffs;
  for (uint32_t e = 0; e < r.graph.edge_count(); ++e)
    if (r.graph.edge_bound.size() > e && r.graph.edge_bound[e] == CpBound::kCpu)
      handoffs.emplace_back(r.graph.node_ts[r.graph.edge_src[e]],
                            r.graph.node_ts[r.graph.edge_dst[e]]);
  std::sort(handoffs.begin(), handoffs.end());
  EXPECT_EQ(handoffs, (std::vector<std::pair<int64_t, int64_t>>{{0, 40000}, {20000, 100000}}));
  // Only the last call was waited for (the thread issued c2 while r1 was pending): the sync
  // edge leaves r2's end.
  EXPECT_EQ(r.counts.waited, 1u);
  std::vector<int64_t> sync_sources;
  for (uint32_t e = 0; e < r.graph.edge_count(); ++e)
    if (r.graph.edge_type[e] == CpEdgeType::kSyncDependency)
      sync_sources.push_back(r.graph.node_ts[r.graph.edge_src[e]]);
  EXPECT_EQ(sync_sources, (std::vector<int64_t>{160000}));
}

TEST(CriticalPathRanks, AnOperatorStartingAsItsIssuerEndsIsWork) {
  // aten::mm starts in the microsecond c10d::allreduce_ ends and runs past the range: the
  // thread did not wait, and aten::mm keeps its whole edge.
  OneRank r = AddRangesTo(Op("cpu_op", "c10d::allreduce_", 1, 0, 10) + "," +
                              Op("cpu_op", "aten::mm", 1, 10, 190) + "," +
                              Op("user_annotation", "gloo:all_reduce", 5, 12, 88),
                          {{"c10d::allreduce_", 0}, {"aten::mm", 10}});
  EXPECT_EQ(r.counts.joined, 1u);
  EXPECT_EQ(r.counts.waited, 0u);
  for (uint32_t e = 0; e < r.graph.edge_count(); ++e)
    EXPECT_NE(r.graph.edge_type[e], CpEdgeType::kSyncDependency);
  const uint32_t mm = EventOf(*r.trace, "aten::mm", 10);
  for (uint32_t e = 0; e < r.graph.edge_count(); ++e) {
    if (r.graph.edge_event[e] == mm) {
      EXPECT_EQ(r.graph.edge_weight[e], 190000);
    }
  }
}

TEST(CriticalPathRanks, ARangeEndingBeforeItsIssuerReturnsIsNotWaitedFor) {
  // The issuer [0, 100] returns after its range [10, 50]: nothing was waited for after it, and
  // the issuer keeps its edge.
  OneRank r = AddRangesTo(Op("cpu_op", "c10d::allreduce_", 1, 0, 100) + "," +
                              Op("user_annotation", "gloo:all_reduce", 5, 10, 40) + "," +
                              Op("cpu_op", "aten::add", 1, 110, 10),
                          {{"c10d::allreduce_", 0}, {"aten::add", 110}});
  EXPECT_EQ(r.counts.joined, 1u);
  EXPECT_EQ(r.counts.waited, 0u);
  const uint32_t issuer = EventOf(*r.trace, "c10d::allreduce_", 10);
  bool own_edge = false;
  for (uint32_t e = 0; e < r.graph.edge_count(); ++e) {
    if (r.graph.edge_event[e] != issuer || r.graph.edge_bound[e] == CpBound::kCpu) continue;
    own_edge = true;
    EXPECT_EQ(r.graph.edge_weight[e], 100000);
  }
  EXPECT_TRUE(own_edge);
}

TEST(CriticalPathRanks, AWorkerRangeWithoutItsIssuerIsCounted) {
  auto trace = testing::MustImport(kGlooLateRank);
  std::vector<RankGraphInput> graphs = GlooGraphs(*trace);
  // Rank 1's graph without its c10d::allreduce_: its gloo range has nothing to hang off.
  CpGraph& g = graphs[1].graph;
  CpGraph bare;
  const Nodes put = AddSpan(bare, *trace, EventOf(*trace, "aten::index_put_", 11));
  const Nodes add = AddSpan(bare, *trace, EventOf(*trace, "aten::add", 11));
  bare.AddEdge(put.end, add.start, CpEdgeType::kDependency, 0);
  g = bare;
  JobGraph job = LinkRanks(std::move(graphs));
  EXPECT_EQ(job.layout.worker_collectives, 1u);
  EXPECT_EQ(job.layout.calls_outside_graph, 1u);
  EXPECT_EQ(job.layout.linked_collectives, 0u);
  EXPECT_EQ(job.layout.unlinked_collectives, 1u);
}

}  // namespace
}  // namespace profsh
