// The TensorBoard profiler plugin's tree of host ranges, per thread (event_parser.py,
// op_tree.py and node.py at kineto 041e7ce): the operators, ProfilerStep ranges, nn.Module
// ranges and the few record_function ranges it keeps (DataLoader, Optimizer.step and the
// nccl:/gloo: collectives), nested by containment. The memory and module views attribute their
// records to its nodes; docs/ANALYSIS.md ("TensorBoard views") lists where it differs.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/analysis/model/event_model.h"
#include "engine/analysis/tensorboard/plugin_events.h"

namespace profsh::tensorboard {

enum class HostNodeKind : uint8_t {
  kOperator,  // the plugin's is_operator_node: a cpu_op it counts as an operator
  kStep,      // ProfilerStep#N
  kModule,    // a python_function range named "nn.Module: ..."
  kOther,     // kept in the tree but not an operator: DataLoader, Optimizer.*, collectives,
              // python ranges, DataParallel.forward
};

struct HostNode {
  uint32_t event;
  int64_t ts, end;
  HostNodeKind kind;
  bool operator_type;              // a cpu_op or operator event (the plugin's EventTypes.OPERATOR)
  bool merged = false;             // merged into its parent of the same name: in no thread's tree
  uint32_t parent;                 // kNoIndex at the top of its thread
  std::vector<uint32_t> children;  // in time order
};

struct HostThread {
  uint32_t track;
  std::vector<uint32_t> roots;  // in time order
};

struct HostTree {
  std::vector<HostNode> nodes;
  std::vector<HostThread> threads;  // ordered by track
  // The deepest node of `thread` whose [ts, end) holds `ts`, or kNoIndex.
  uint32_t DeepestAt(const HostThread& thread, int64_t ts) const;
  // The thread of a track; nullptr when the track has no node.
  const HostThread* ThreadOf(uint32_t track) const;
};

// The plugin's kind of a complete event by its category and name; false for the events it
// leaves out of its host tree.
bool PluginHostNodeKind(std::string_view category, std::string_view name, HostNodeKind* kind);

// The plugin's rule: ranges of a thread ordered by (start, longer first); a range that starts
// inside the open one but ends after it is dropped, as the plugin drops it. An operator whose
// only child is an operator of the same name takes that child's children in its place
// (op_tree.py's remove_dup_nodes, after torch's EventList._remove_dup_nodes).
HostTree BuildHostTree(const EventModel& model);

// The plugin's "profiler start": the earliest complete event of a category it reads, or
// [memory] instant (data.py's profiler_start_ts); the trace's first instant when none.
int64_t PluginStartNs(const EventModel& model);

}  // namespace profsh::tensorboard
