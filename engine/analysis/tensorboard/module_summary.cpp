#include "engine/analysis/tensorboard/module_summary.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "engine/analysis/model/event_model.h"
#include "engine/analysis/model/python_function_args.h"
#include "engine/analysis/tensorboard/host_tree.h"

namespace profsh::tensorboard {
namespace {

constexpr std::string_view kModulePrefix = "nn.Module: ";

// A list of keys in the order they were first put in, with a value each (a Python dict).
template <typename V>
struct OrderedMap {
  std::vector<int64_t> keys;
  std::unordered_map<int64_t, V> values;
  V& operator[](int64_t k) {
    auto [it, added] = values.try_emplace(k);
    if (added) keys.push_back(k);
    return it->second;
  }
  bool contains(int64_t k) const { return values.count(k) != 0; }
};

struct Hierarchy {
  std::string name;  // the range's name, prefix and all
  int64_t module_id;
  std::vector<Hierarchy> children;
  bool operator==(const Hierarchy&) const = default;
};

// module_op.py's _build_module_hierarchy: each leaf of the python_function call tree walked up
// to its root, keeping only the modules, gives each module its parent module.
std::vector<Hierarchy> ModuleHierarchy(const Trace& t, const EventModel& model,
                                       const PythonFunctionArgs& args) {
  struct PyEvent {
    uint32_t event;
    int64_t id, parent;
    std::optional<int64_t> module;
  };
  std::vector<PyEvent> events;
  for (size_t i = 0; i < t.events.size(); ++i) {
    if (model.role(i).role != EventRole::kPythonFunction) continue;
    const auto id = args.Id(i);
    if (!id) continue;
    events.push_back(
        PyEvent{static_cast<uint32_t>(i), *id, args.ParentId(i).value_or(kNoId), args.ModuleId(i)});
  }
  std::stable_sort(events.begin(), events.end(), [&](const PyEvent& a, const PyEvent& b) {
    return t.events.ts(a.event) < t.events.ts(b.event);
  });
  std::unordered_map<int64_t, const PyEvent*> by_id;
  for (const PyEvent& e : events) by_id[e.id] = &e;
  OrderedMap<std::vector<int64_t>> children;
  for (const PyEvent& e : events) {
    children[e.id];
    children[e.parent].push_back(e.id);
  }
  OrderedMap<std::optional<int64_t>> module_parent;
  std::set<std::pair<int64_t, int64_t>> seen;
  for (int64_t leaf : children.keys) {
    if (!children.values[leaf].empty() || !by_id.count(leaf)) continue;
    const PyEvent* current_module = nullptr;
    for (const PyEvent* e = by_id[leaf]; e;) {
      if (e->module) {
        if (current_module) module_parent[current_module->id] = e->id;
        current_module = e;
        module_parent[e->id];
      }
      if (!seen.insert({e->id, current_module ? current_module->id : kNoId}).second) break;
      auto it = by_id.find(e->parent);
      e = it == by_id.end() ? nullptr : it->second;
    }
  }
  OrderedMap<std::vector<int64_t>> module_children;
  for (int64_t child : module_parent.keys) {
    module_children[child];
    if (const auto parent = module_parent.values[child]) module_children[*parent].push_back(child);
  }
  auto build = [&](auto& self, int64_t id) -> Hierarchy {
    const PyEvent& e = *by_id[id];
    Hierarchy h{std::string(t.str(t.events.name(e.event))), *e.module, {}};
    for (int64_t c : module_children[id]) h.children.push_back(self(self, c));
    return h;
  };
  std::vector<Hierarchy> roots;
  for (int64_t id : module_parent.keys) {
    if (module_parent.values[id]) continue;
    Hierarchy h = build(build, id);
    if (std::find(roots.begin(), roots.end(), h) == roots.end()) roots.push_back(std::move(h));
  }
  return roots;
}

}  // namespace

ModuleSummary BuildModuleSummary(const Trace& t) {
  const EventModel& model = ModelOf(t);
  const PythonFunctionArgs args(t);
  const std::vector<Hierarchy> hierarchy = ModuleHierarchy(t, model, args);
  ModuleSummary out;
  if (hierarchy.empty()) return out;
  const HostTree tree = BuildHostTree(model);

  // Each runtime call's operator: the first node (not a module) with its External id; its
  // device time: the kernels, copies and sets of its correlation.
  std::unordered_map<uint32_t, uint32_t> node_of_event;
  for (uint32_t n = 0; n < tree.nodes.size(); ++n)
    if (!tree.nodes[n].merged) node_of_event[tree.nodes[n].event] = n;
  const EventIds& ids = model.ids();
  std::vector<int64_t> runtime_device(ids.runtime.size(), 0);
  for (size_t k = 0; k < ids.device_work.size(); ++k) {
    const uint32_t e = ids.device_work.event[k];
    if (model.role(e).work == DeviceWorkKind::kSync) continue;
    const uint32_t r = FirstCandidate(model.links().RuntimeCandidates(k));
    if (r != kNoIndex) runtime_device[r] += t.events.dur(e);
  }
  std::vector<int64_t> own_device(tree.nodes.size(), 0), runtime_time(tree.nodes.size(), 0);
  for (size_t r = 0; r < ids.runtime.size(); ++r) {
    if (ids.runtime.external[r] == 0) continue;  // the plugin gives these to the thread's root
    for (uint32_t range : model.links().RangeCandidatesOfRuntime(r)) {
      auto it = node_of_event.find(ids.ranges.event[range]);
      if (it == node_of_event.end() || tree.nodes[it->second].kind == HostNodeKind::kModule)
        continue;
      own_device[it->second] += runtime_device[r];
      runtime_time[it->second] += t.events.dur(ids.runtime.event[r]);
      break;
    }
  }
  // node.py's fill_stats, children first.
  std::vector<uint32_t> order;
  for (const HostThread& thread : tree.threads)
    order.insert(order.end(), thread.roots.begin(), thread.roots.end());
  for (size_t i = 0; i < order.size(); ++i)
    for (uint32_t c : tree.nodes[order[i]].children) order.push_back(c);
  std::vector<int64_t> device(tree.nodes.size(), 0), self_host(tree.nodes.size(), 0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const HostNode& node = tree.nodes[*it];
    device[*it] = own_device[*it];
    self_host[*it] = node.end - node.ts - runtime_time[*it];
    for (uint32_t c : node.children) {
      device[*it] += device[c];
      self_host[*it] -= tree.nodes[c].end - tree.nodes[c].ts;
    }
  }
  // _aggregate_modules, by (name, module id).
  std::map<std::pair<std::string, int64_t>, ModuleStats> aggregates;
  for (uint32_t n : order) {
    const HostNode& node = tree.nodes[n];
    if (node.kind != HostNodeKind::kModule) continue;
    const auto module_id = args.ModuleId(node.event);
    if (!module_id) continue;
    ModuleStats& s = aggregates[{std::string(t.str(t.events.name(node.event))), *module_id}];
    ++s.occurrences;
    s.host_duration += node.end - node.ts;
    s.self_host_duration += self_host[n];
    s.device_duration += device[n];
    for (uint32_t c : node.children)
      if (tree.nodes[c].kind == HostNodeKind::kOperator) {
        ++s.operators;
        s.self_device_duration += device[c];
      }
  }
  auto stats = [&](auto& self, const Hierarchy& h) -> ModuleStats {
    ModuleStats s = aggregates[{h.name, h.module_id}];
    s.name = h.name.starts_with(kModulePrefix) ? h.name.substr(kModulePrefix.size()) : h.name;
    s.module_id = h.module_id;
    if (s.occurrences > 0) {
      const double n = static_cast<double>(s.occurrences);
      s.avg_duration = s.device_duration > 0 ? static_cast<double>(s.device_duration) / n
                                             : static_cast<double>(s.host_duration) / n;
    }
    for (const Hierarchy& c : h.children) s.children.push_back(self(self, c));
    return s;
  };
  for (const Hierarchy& h : hierarchy) out.roots.push_back(stats(stats, h));
  std::stable_sort(out.roots.begin(), out.roots.end(),
                   [](const ModuleStats& a, const ModuleStats& b) { return a.name < b.name; });
  return out;
}

AnalysisRows ModuleSummaryRows(const ModuleSummary& summary) {
  AnalysisRows rows;
  rows.columns = {"depth",
                  "name",
                  "id",
                  "occurrences",
                  "operators",
                  "host_duration",
                  "self_host_duration",
                  "device_duration",
                  "self_device_duration",
                  "avg_duration"};
  auto us = [](double ns) { return Cell::Double(ns / 1000.0); };
  auto add = [&](auto& self, const ModuleStats& s, int64_t depth) -> void {
    rows.rows.push_back(
        {Cell::Int(depth), Cell::Text(s.name), Cell::Int(s.module_id), Cell::Int(s.occurrences),
         Cell::Int(s.operators), us(static_cast<double>(s.host_duration)),
         us(static_cast<double>(s.self_host_duration)), us(static_cast<double>(s.device_duration)),
         us(static_cast<double>(s.self_device_duration)), us(s.avg_duration)});
    for (const ModuleStats& c : s.children) self(self, c, depth + 1);
  };
  for (const ModuleStats& s : summary.roots) add(add, s, 0);
  if (summary.roots.empty())
    rows.notes.push_back("no nn.Module ranges with their Python ids (record with with_stack=True)");
  return rows;
}

}  // namespace profsh::tensorboard
