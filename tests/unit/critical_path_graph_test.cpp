// The critical path graph's longest path on hand-made graphs: the answer, networkx's tie rule,
// edge weight overrides and removals (a what-if), and the errors.
#include <gtest/gtest.h>

#include <vector>

#include "engine/analysis/critical_path/cp_graph.h"

namespace profsh {
namespace {

// a -> b -> d (3 + 4) and a -> c -> d (5 + 1): the path is a b d, length 7.
CpGraph Diamond() {
  CpGraph g;
  for (int i = 0; i < 4; ++i) g.AddNode(i * 10, static_cast<uint32_t>(i), i == 0);
  g.AddEdge(0, 1, CpEdgeType::kOperatorKernel, 3, 0);
  g.AddEdge(0, 2, CpEdgeType::kKernelLaunchDelay, 5);
  g.AddEdge(1, 3, CpEdgeType::kOperatorKernel, 4, 1);
  g.AddEdge(2, 3, CpEdgeType::kKernelKernelDelay, 1, 2);
  return g;
}

TEST(CriticalPathGraph, LongestPath) {
  auto p = LongestPath(Diamond());
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->length_ns, 7);
  EXPECT_EQ(p->nodes, (std::vector<uint32_t>{0, 1, 3}));
  EXPECT_EQ(p->edges, (std::vector<uint32_t>{0, 2}));
}

TEST(CriticalPathGraph, OverridesAndRemovalsRecomputeOnTheSameGraph) {
  const CpGraph g = Diamond();
  // The bottleneck a -> b made 4x faster: the other branch (6) is now the path.
  std::vector<int64_t> w = g.edge_weight;
  w[0] = 0;
  auto p = LongestPath(g, w);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->length_ns, 6);
  EXPECT_EQ(p->nodes, (std::vector<uint32_t>{0, 2, 3}));
  // Removing b -> d instead leaves a -> c -> d.
  w = g.edge_weight;
  w[2] = kCpRemovedEdge;
  p = LongestPath(g, w);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->nodes, (std::vector<uint32_t>{0, 2, 3}));
  // The graph itself is unchanged.
  EXPECT_EQ(LongestPath(g)->length_ns, 7);
  EXPECT_FALSE(LongestPath(g, std::vector<int64_t>{1, 2}).ok());
}

TEST(CriticalPathGraph, TiesResolveAsNetworkx) {
  // Two equal branches, joined by zero-weight edges: the path ends at the first node (in
  // topological order) with the largest distance, as networkx's does (checked with networkx
  // 2.8: [0, 2], then [0, 1]).
  CpGraph g;
  for (int i = 0; i < 4; ++i) g.AddNode(i, static_cast<uint32_t>(i), true);
  g.AddEdge(0, 2, CpEdgeType::kOperatorKernel, 5);
  g.AddEdge(0, 1, CpEdgeType::kOperatorKernel, 5);
  g.AddEdge(2, 3, CpEdgeType::kDependency, 0);
  g.AddEdge(1, 3, CpEdgeType::kDependency, 0);
  auto p = LongestPath(g);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->nodes, (std::vector<uint32_t>{0, 2}));
  // A negative weight counts as 0 (HTA's _validate_graph); a re-added pair replaces its edge.
  g.AddEdge(0, 2, CpEdgeType::kOperatorKernel, -1);
  EXPECT_EQ(g.edge_count(), 4u);
  p = LongestPath(g);
  EXPECT_EQ(p->nodes, (std::vector<uint32_t>{0, 1}));
}

TEST(CriticalPathGraph, NodesOnNoEdgeTakeNoPart) {
  // networkx's graph holds only the nodes of HTA's edges, in the order they first appear there.
  CpGraph g;
  for (int i = 0; i < 3; ++i) g.AddNode(i, static_cast<uint32_t>(i), true);
  g.AddEdge(2, 1, CpEdgeType::kDependency, 0);
  auto p = LongestPath(g);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->nodes, (std::vector<uint32_t>{2}));
  EXPECT_TRUE(LongestPath(CpGraph{})->nodes.empty());
}

TEST(CriticalPathGraph, CycleIsAnError) {
  CpGraph g = Diamond();
  g.AddEdge(3, 0, CpEdgeType::kSyncDependency, 0);
  auto p = LongestPath(g);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("cycle"), std::string::npos);
}

}  // namespace
}  // namespace profsh
