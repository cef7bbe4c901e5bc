#include "engine/analysis/tensorboard/memory_summary.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <unordered_map>

#include "engine/analysis/model/event_model.h"
#include "engine/analysis/model/memory_records.h"
#include "engine/analysis/tensorboard/host_tree.h"

namespace profsh::tensorboard {
namespace {

// memory_parser.py's MemoryRecord.device_name: other device types have none, and the plugin
// leaves their records out of every table.
std::string PluginDeviceName(const MemoryRecord& r) {
  if (r.device_type == 0) return "CPU";
  if (r.device_type == 1) return "GPU" + std::to_string(r.device_id);
  return {};
}

// A map that gives back its entries in the order their keys were first put in, as a Python
// dict does when a key is overwritten but not deleted.
struct PendingByAddress {
  struct Entry {
    size_t record;
    uint64_t first_insert;
  };
  std::unordered_map<int64_t, Entry> entries;
  uint64_t inserts = 0;
  void Put(int64_t addr, size_t record) {
    auto [it, added] = entries.try_emplace(addr, Entry{record, inserts});
    if (added)
      ++inserts;
    else
      it->second.record = record;
  }
  std::vector<size_t> InInsertionOrder() const {
    std::vector<const Entry*> e;
    for (const auto& [addr, entry] : entries) e.push_back(&entry);
    std::sort(e.begin(), e.end(),
              [](const Entry* a, const Entry* b) { return a->first_insert < b->first_insert; });
    std::vector<size_t> out;
    for (const Entry* x : e) out.push_back(x->record);
    return out;
  }
};

enum Metric {
  kSelfIncrease,
  kSelfAllocationSize,
  kSelfAllocationCount,
  kIncrease,
  kAllocationSize,
  kAllocationCount,
  kMetricCount
};

}  // namespace

MemorySummary BuildMemorySummary(const Trace& t) {
  const EventModel& model = ModelOf(t);
  MemorySummary summary;
  summary.start_ns = PluginStartNs(model);
  std::vector<MemoryRecord> records = MemoryRecordsOf(t);
  std::stable_sort(records.begin(), records.end(),
                   [&](const MemoryRecord& a, const MemoryRecord& b) {
                     return t.events.ts(a.event) < t.events.ts(b.event);
                   });
  const HostTree tree = BuildHostTree(model);
  auto node_name = [&](uint32_t n) { return t.str(t.events.name(tree.nodes[n].event)); };

  std::map<std::string, DeviceMemorySummary> devices;
  auto device = [&](const std::string& name) -> DeviceMemorySummary& {
    DeviceMemorySummary& d = devices[name];
    d.device = name;
    return d;
  };

  // Each record's operator: the deepest node of its thread's tree holding it, when that node is
  // an operator. Allocations keep its name (and its parent's, for aten::empty).
  std::vector<std::string> op_of_record(records.size());
  // Per (device, operator name): the six metrics summed over the operator's calls; a record
  // counts for its operator's self figures and for the totals of every operator above it.
  std::vector<std::string> device_names;
  auto device_index = [&](const std::string& name) -> uint64_t {
    auto it = std::find(device_names.begin(), device_names.end(), name);
    if (it != device_names.end()) return static_cast<uint64_t>(it - device_names.begin());
    device_names.push_back(name);
    return device_names.size() - 1;
  };
  std::unordered_map<uint64_t, std::array<int64_t, kMetricCount>> metrics_by_name;
  auto metrics = [&](uint64_t dev, uint32_t node) -> std::array<int64_t, kMetricCount>& {
    return metrics_by_name[dev << 32 | t.events.name(tree.nodes[node].event)];
  };
  for (size_t i = 0; i < records.size(); ++i) {
    const MemoryRecord& r = records[i];
    const HostThread* thread = tree.ThreadOf(t.events.track(r.event));
    const uint32_t n = thread ? tree.DeepestAt(*thread, t.events.ts(r.event)) : kNoIndex;
    if (n == kNoIndex || tree.nodes[n].kind != HostNodeKind::kOperator) {
      ++summary.unattributed_records;
      continue;
    }
    if (r.bytes > 0) {
      const std::string_view op = node_name(n);
      const uint32_t parent = tree.nodes[n].parent;
      op_of_record[i] = op.starts_with("aten::empty")
                            ? std::string(parent == kNoIndex ? "CallTreeRoot" : node_name(parent)) +
                                  " (" + std::string(op) + ")"
                            : std::string(op);
    }
    const std::string dev_name = PluginDeviceName(r);
    if (dev_name.empty()) continue;
    const uint64_t dev = device_index(dev_name);
    const int64_t allocated = r.bytes > 0 ? r.bytes : 0, count = r.bytes > 0 ? 1 : 0;
    auto& self = metrics(dev, n);
    self[kSelfIncrease] += r.bytes;
    self[kSelfAllocationSize] += allocated;
    self[kSelfAllocationCount] += count;
    for (uint32_t a = n; a != kNoIndex; a = tree.nodes[a].parent) {
      if (tree.nodes[a].kind != HostNodeKind::kOperator) continue;
      auto& total = metrics(dev, a);
      total[kIncrease] += r.bytes;
      total[kAllocationSize] += allocated;
      total[kAllocationCount] += count;
    }
  }

  // Per-operator statistics by name; calls count every call of the operator in the trace.
  std::unordered_map<uint32_t, int64_t> calls;
  for (const HostNode& node : tree.nodes)
    if (node.kind == HostNodeKind::kOperator && !node.merged) ++calls[t.events.name(node.event)];
  std::map<std::pair<std::string_view, std::string_view>,
           std::pair<uint32_t, const std::array<int64_t, kMetricCount>*>>
      by_name;
  for (const auto& [key, m] : metrics_by_name) {
    const uint32_t name = static_cast<uint32_t>(key & 0xffffffffu);
    by_name[{device_names[key >> 32], t.str(name)}] = {name, &m};
  }
  for (const auto& [key, value] : by_name) {
    const auto& m = *value.second;
    if (std::all_of(m.begin(), m.end(), [](int64_t v) { return v == 0; })) continue;
    device(std::string(key.first))
        .operators.push_back(MemoryOperatorStats{std::string(key.second), calls[value.first],
                                                 m[kIncrease], m[kSelfIncrease],
                                                 m[kAllocationCount], m[kSelfAllocationCount],
                                                 m[kAllocationSize], m[kSelfAllocationSize]});
  }

  // The curve: records with an address and both totals.
  for (const MemoryRecord& r : records) {
    const std::string dev = PluginDeviceName(r);
    if (!r.has_addr || dev.empty() || std::isnan(r.total_allocated) || std::isnan(r.total_reserved))
      continue;
    DeviceMemorySummary& d = device(dev);
    d.curve.push_back(MemoryCurvePoint{t.events.ts(r.event) - summary.start_ns, r.total_allocated,
                                       r.total_reserved});
    d.peak_allocated = std::max(d.peak_allocated, r.total_allocated);
  }

  // Allocations matched to their frees by address: matched pairs as the frees come, then the
  // allocations never freed, then the frees of memory allocated before the trace.
  PendingByAddress allocs, frees;
  auto since_start = [&](size_t i) { return t.events.ts(records[i].event) - summary.start_ns; };
  auto display_name = [&](size_t i) {
    return op_of_record[i].empty() ? std::string("<unknown>") : op_of_record[i];
  };
  auto add = [&](size_t record, MemoryAllocation a) {
    const std::string dev = PluginDeviceName(records[record]);
    if (!dev.empty()) device(dev).allocations.push_back(std::move(a));
  };
  for (size_t i = 0; i < records.size(); ++i) {
    const MemoryRecord& r = records[i];
    if (!r.has_addr) continue;
    if (r.bytes > 0) {
      allocs.Put(r.addr, i);
      continue;
    }
    auto it = allocs.entries.find(r.addr);
    if (it == allocs.entries.end()) {
      frees.Put(r.addr, i);
      continue;
    }
    const size_t a = it->second.record;
    allocs.entries.erase(it);
    add(a, MemoryAllocation{display_name(a), -r.bytes, since_start(a), since_start(i)});
  }
  for (size_t a : allocs.InInsertionOrder())
    add(a, MemoryAllocation{display_name(a), records[a].bytes, since_start(a), std::nullopt});
  for (size_t f : frees.InInsertionOrder())
    add(f, MemoryAllocation{"<unknown>", -records[f].bytes, std::nullopt, since_start(f)});

  for (auto& [name, d] : devices) summary.devices.push_back(std::move(d));
  summary.default_device = "CPU";
  for (const DeviceMemorySummary& d : summary.devices)
    if (d.device.starts_with("GPU")) {
      summary.default_device = d.device;
      break;
    }
  return summary;
}

MemorySummaryRows MemorySummaryAsRows(const MemorySummary& s) {
  MemorySummaryRows out;
  out.operators.columns = {"device",
                           "name",
                           "calls",
                           "size_increase",
                           "self_size_increase",
                           "allocation_count",
                           "self_allocation_count",
                           "allocation_size",
                           "self_allocation_size"};
  out.curve.columns = {"device", "ts", "allocated", "reserved"};
  out.allocations.columns = {"device", "operator", "bytes", "alloc_ts", "free_ts", "duration"};
  out.devices.columns = {"device", "peak_allocated", "curve_points", "allocations"};
  auto us = [](int64_t ns) { return Cell::Double(static_cast<double>(ns) / 1000.0); };
  auto number = [](double v) {
    return v == std::floor(v) && std::fabs(v) < 9e15 ? Cell::Int(static_cast<int64_t>(v))
                                                     : Cell::Double(v);
  };
  for (const DeviceMemorySummary& d : s.devices) {
    for (const MemoryOperatorStats& o : d.operators)
      out.operators.rows.push_back(
          {Cell::Text(d.device), Cell::Text(o.name), Cell::Int(o.calls), Cell::Int(o.size_increase),
           Cell::Int(o.self_size_increase), Cell::Int(o.allocation_count),
           Cell::Int(o.self_allocation_count), Cell::Int(o.allocation_size),
           Cell::Int(o.self_allocation_size)});
    for (const MemoryCurvePoint& p : d.curve)
      out.curve.rows.push_back(
          {Cell::Text(d.device), us(p.ts), number(p.allocated), number(p.reserved)});
    for (const MemoryAllocation& a : d.allocations) {
      const bool both = a.alloc_ts && a.free_ts;
      out.allocations.rows.push_back({Cell::Text(d.device), Cell::Text(a.op), Cell::Int(a.bytes),
                                      a.alloc_ts ? us(*a.alloc_ts) : Cell::Empty(),
                                      a.free_ts ? us(*a.free_ts) : Cell::Empty(),
                                      both ? us(*a.free_ts - *a.alloc_ts) : Cell::Empty()});
    }
    out.devices.rows.push_back({Cell::Text(d.device), number(d.peak_allocated),
                                Cell::Int(static_cast<int64_t>(d.curve.size())),
                                Cell::Int(static_cast<int64_t>(d.allocations.size()))});
  }
  if (s.unattributed_records > 0)
    out.operators.notes.push_back(std::to_string(s.unattributed_records) +
                                  " memory records lie under no operator (the plugin skips them "
                                  "in the per-operator statistics)");
  return out;
}

}  // namespace profsh::tensorboard
