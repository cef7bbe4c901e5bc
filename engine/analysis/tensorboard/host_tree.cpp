#include "engine/analysis/tensorboard/host_tree.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <string>

namespace profsh::tensorboard {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// trace.py's EventTypeMap: the categories whose complete events the plugin reads (its memory
// events too, which have no EventTypes entry of their own).
bool IsPluginCategory(const std::string& c) {
  return PluginTypeOfCategory(c) != PluginEventType::kNone || c == "memory";
}

// op_tree.py's remove_dup_nodes, from the top of each thread down.
void RemoveDuplicateNodes(const Trace& t, HostTree* tree) {
  std::vector<uint32_t> todo;
  for (const HostThread& thread : tree->threads)
    todo.insert(todo.end(), thread.roots.begin(), thread.roots.end());
  while (!todo.empty()) {
    const uint32_t n = todo.back();
    todo.pop_back();
    HostNode& node = tree->nodes[n];
    while (node.children.size() == 1) {
      HostNode& child = tree->nodes[node.children[0]];
      if (!node.operator_type || !child.operator_type || node.kind == HostNodeKind::kStep ||
          child.kind == HostNodeKind::kStep ||
          t.events.name(node.event) != t.events.name(child.event))
        break;
      child.merged = true;
      std::vector<uint32_t> grandchildren = std::move(child.children);
      for (uint32_t g : grandchildren) tree->nodes[g].parent = n;
      node.children = std::move(grandchildren);
    }
    todo.insert(todo.end(), node.children.begin(), node.children.end());
  }
}

}  // namespace

bool PluginHostNodeKind(std::string_view category, std::string_view name, HostNodeKind* kind) {
  const std::string c = Lower(category);
  const bool op = c == "cpu_op" || c == "operator";
  if ((op || c == "user_annotation") && name.starts_with("ProfilerStep#")) {
    *kind = HostNodeKind::kStep;
    return true;
  }
  if (c == "python_function") {
    // The plugin tells modules by their "Python module id" argument; torch names each such
    // range "nn.Module: <class>_<n>" and no other.
    if (!name.starts_with("nn.Module: ")) return false;
    *kind = HostNodeKind::kModule;
    return true;
  }
  if (c == "python") {
    *kind = HostNodeKind::kOther;
    return true;
  }
  if (!op && c != "user_annotation") return false;
  if (IsPluginDataLoaderName(name) || name.starts_with("Optimizer.step")) {
    *kind = HostNodeKind::kOther;
    return true;
  }
  if (c == "user_annotation") {
    if (!IsPluginCollectiveName(name)) return false;
    *kind = HostNodeKind::kOther;  // an OperatorNode of type user_annotation: not an operator
    return true;
  }
  const bool excluded = name == "DataParallel.forward" ||
                        name == "DistributedDataParallel.forward" || name.starts_with("Optimizer.");
  *kind = excluded ? HostNodeKind::kOther : HostNodeKind::kOperator;
  return true;
}

HostTree BuildHostTree(const EventModel& model) {
  const Trace& t = model.trace();
  // The kind of each template, decided once.
  const auto& templates = t.events.templates();
  std::vector<int8_t> kind_of_template(templates.size(), -1);
  for (size_t i = 0; i < templates.size(); ++i) {
    if (EventTable::PhaseOf(templates[i].kind) != 'X') continue;
    HostNodeKind kind;
    if (PluginHostNodeKind(t.category_name(EventTable::CategoryOf(templates[i].kind)),
                           t.str(templates[i].name), &kind))
      kind_of_template[i] = static_cast<int8_t>(kind);
  }
  HostTree tree;
  std::vector<uint32_t> order;
  for (size_t i = 0; i < t.events.size(); ++i) {
    const int8_t kind = kind_of_template[t.events.template_column()[i]];
    if (kind < 0) continue;
    order.push_back(static_cast<uint32_t>(tree.nodes.size()));
    const std::string category = Lower(t.category_name(t.events.category(i)));
    HostNode node{.event = static_cast<uint32_t>(i),
                  .ts = t.events.ts(i),
                  .end = t.events.end(i),
                  .kind = static_cast<HostNodeKind>(kind),
                  .operator_type = category == "cpu_op" || category == "operator",
                  .parent = kNoIndex};
    tree.nodes.push_back(std::move(node));
  }
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const HostNode &x = tree.nodes[a], &y = tree.nodes[b];
    const uint32_t tx = t.events.track(x.event), ty = t.events.track(y.event);
    if (tx != ty) return tx < ty;
    if (x.ts != y.ts) return x.ts < y.ts;
    return x.end > y.end;
  });
  std::vector<uint32_t> stack;
  for (uint32_t n : order) {
    HostNode& node = tree.nodes[n];
    const uint32_t track = t.events.track(node.event);
    if (tree.threads.empty() || tree.threads.back().track != track) {
      tree.threads.push_back(HostThread{track, {}});
      stack.clear();
    }
    while (!stack.empty() && node.ts >= tree.nodes[stack.back()].end) stack.pop_back();
    if (!stack.empty() && node.end > tree.nodes[stack.back()].end) continue;  // intersects
    if (stack.empty()) {
      tree.threads.back().roots.push_back(n);
    } else {
      node.parent = stack.back();
      tree.nodes[stack.back()].children.push_back(n);
    }
    stack.push_back(n);
  }
  RemoveDuplicateNodes(t, &tree);
  return tree;
}

const HostThread* HostTree::ThreadOf(uint32_t track) const {
  auto it = std::lower_bound(threads.begin(), threads.end(), track,
                             [](const HostThread& h, uint32_t k) { return h.track < k; });
  return it != threads.end() && it->track == track ? &*it : nullptr;
}

uint32_t HostTree::DeepestAt(const HostThread& thread, int64_t ts) const {
  // Siblings do not overlap: the one that may hold ts is the last to start at or before it.
  auto find = [&](const std::vector<uint32_t>& siblings) -> uint32_t {
    auto it = std::upper_bound(siblings.begin(), siblings.end(), ts,
                               [&](int64_t v, uint32_t n) { return v < nodes[n].ts; });
    if (it == siblings.begin()) return kNoIndex;
    const uint32_t n = *(it - 1);
    return ts < nodes[n].end ? n : kNoIndex;
  };
  uint32_t deepest = find(thread.roots);
  if (deepest == kNoIndex) return kNoIndex;
  for (uint32_t next; (next = find(nodes[deepest].children)) != kNoIndex;) deepest = next;
  return deepest;
}

int64_t PluginStartNs(const EventModel& model) {
  const Trace& t = model.trace();
  const auto& templates = t.events.templates();
  std::vector<uint8_t> counts(templates.size(), 0);
  for (size_t i = 0; i < templates.size(); ++i) {
    const char phase = EventTable::PhaseOf(templates[i].kind);
    counts[i] =
        (phase == 'X' &&
         IsPluginCategory(Lower(t.category_name(EventTable::CategoryOf(templates[i].kind))))) ||
        model.roles().of_template(static_cast<uint32_t>(i)).role == EventRole::kMemory;
  }
  int64_t start = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < t.events.size(); ++i)
    if (counts[t.events.template_column()[i]]) start = std::min(start, t.events.ts(i));
  return start == std::numeric_limits<int64_t>::max() ? t.begin_ns() : start;
}

}  // namespace profsh::tensorboard
