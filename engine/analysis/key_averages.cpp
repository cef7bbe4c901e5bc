#include "engine/analysis/key_averages.h"

#include <unordered_map>

#include "engine/util/hash.h"

namespace profsh {

namespace {

void Accumulate(AverageRow& row, const FunctionEvent& e) {
  row.count += 1;
  row.cpu_time_total_ns += e.cpu_total_ns();
  row.cuda_time_total_ns += e.is_async ? 0 : e.cuda_total_ns;
  row.self_cpu_time_total_ns += e.self_cpu_ns();
  row.self_cuda_time_total_ns += e.self_cuda_ns();
  row.cpu_memory_usage += e.cpu_memory;
  row.cuda_memory_usage += e.cuda_memory;
  row.self_cpu_memory_usage += e.self_cpu_memory();
  row.self_cuda_memory_usage += e.self_cuda_memory();
  row.flops += e.flops;
}

struct VectorHash {
  size_t operator()(const std::vector<uint32_t>& v) const {
    return HashBytes(reinterpret_cast<const char*>(v.data()), v.size() * 4);
  }
};

}  // namespace

KeyAverages ComputeKeyAverages(std::shared_ptr<const FunctionEvents> events,
                               bool group_by_input_shape, int group_by_stack_n) {
  KeyAverages out;
  out.group_by_input_shape = group_by_input_shape;
  out.group_by_stack_n = group_by_stack_n < 0 ? 0 : group_by_stack_n;
  out.profile_memory = events->profile_memory;
  out.with_flops = events->with_flops;
  const size_t stack_n = static_cast<size_t>(out.group_by_stack_n);

  auto start_row = [&](const FunctionEvent& e) {
    AverageRow row;
    row.key = e.name;
    row.device = e.device;
    row.is_async = e.is_async;
    row.is_user_annotation = e.is_user_annotation;
    row.has_parent = e.parent >= 0;
    if (group_by_input_shape) row.input_shapes = e.input_shapes;
    const auto& frames = events->stacks.Get(e.stack);
    row.stack.assign(frames.begin(), frames.begin() + std::min(frames.size(), stack_n));
    out.rows.push_back(std::move(row));
    return static_cast<uint32_t>(out.rows.size() - 1);
  };

  if (!group_by_input_shape && stack_n == 0) {
    // The common case: one row per (name, device); a flat map, no hashing of composite keys.
    std::unordered_map<uint64_t, uint32_t> index;
    index.reserve(1024);
    for (const FunctionEvent& e : events->events) {
      uint64_t k = (static_cast<uint64_t>(e.name) << 1) | static_cast<uint64_t>(e.device);
      auto [it, inserted] = index.emplace(k, 0);
      if (inserted) it->second = start_row(e);
      Accumulate(out.rows[it->second], e);
    }
  } else {
    std::unordered_map<std::vector<uint32_t>, uint32_t, VectorHash> index;
    std::vector<uint32_t> key;
    for (const FunctionEvent& e : events->events) {
      key.clear();
      key.push_back(e.name);
      key.push_back(static_cast<uint32_t>(e.device));
      if (group_by_input_shape) key.push_back(e.input_shapes);
      if (stack_n > 0) {
        const auto& frames = events->stacks.Get(e.stack);
        key.insert(key.end(), frames.begin(), frames.begin() + std::min(frames.size(), stack_n));
      }
      auto [it, inserted] = index.emplace(key, 0);
      if (inserted) it->second = start_row(e);
      Accumulate(out.rows[it->second], e);
    }
  }
  out.events = std::move(events);
  return out;
}

}  // namespace profsh
