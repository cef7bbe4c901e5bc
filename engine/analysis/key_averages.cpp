#include "engine/analysis/key_averages.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "engine/util/hash.h"
#include "engine/util/parallel.h"
#include "engine/util/saturating.h"

namespace profsh {

namespace {

struct VectorHash {
  size_t operator()(const std::vector<uint32_t>& v) const {
    return HashBytes(reinterpret_cast<const char*>(v.data()), v.size() * 4);
  }
};

}  // namespace

KeyAverages ComputeKeyAverages(std::shared_ptr<const FunctionEvents> events,
                               bool group_by_input_shape, int group_by_stack_n,
                               std::optional<TorchFormat> torch_format,
                               const EventSampleCounts* samples) {
  KeyAverages out;
  if (samples && samples->empty()) samples = nullptr;
  out.has_samples = samples != nullptr;
  out.torch_format = torch_format.value_or(events->torch_format);
  const bool by_annotation = out.torch_format == TorchFormat::k2;
  out.group_by_input_shape = group_by_input_shape;
  out.group_by_stack_n = group_by_stack_n < 0 ? 0 : group_by_stack_n;
  out.profile_memory = events->profile_memory;
  out.with_flops = events->with_flops;
  const FunctionEvents& fe = *events;
  const size_t stack_n = static_cast<size_t>(out.group_by_stack_n);
  const size_t n = fe.size();

  // Row of each event. torch keys rows by (name, node, device, legacy[, shapes][, stack[:n]]);
  // 2.x adds is_user_annotation (CPU user ranges and gpu_user_annotation spans) after legacy.
  auto annotation_bit = [&](size_t i) -> uint32_t {
    return by_annotation && fe.kind(i) == EventKind::kAnnotation ? 1 : 0;
  };
  LargeVector<uint32_t> row_of(n);
  std::vector<uint32_t> first;  // per row: the event torch adds first
  if (!group_by_input_shape && stack_n == 0) {
    std::vector<uint32_t> index(static_cast<size_t>(fe.strings.size()) * 4, UINT32_MAX);
    for (size_t i = 0; i < n; ++i) {
      if (fe.removed(i)) continue;
      uint32_t& slot =
          index[fe.name(i) * 4 + static_cast<uint32_t>(fe.device(i)) * 2 + annotation_bit(i)];
      if (slot == UINT32_MAX) {
        slot = static_cast<uint32_t>(first.size());
        first.push_back(static_cast<uint32_t>(i));
      }
      row_of[i] = slot;
    }
  } else {
    std::unordered_map<std::vector<uint32_t>, uint32_t, VectorHash> index;
    std::vector<uint32_t> key;
    for (size_t i = 0; i < n; ++i) {
      if (fe.removed(i)) continue;
      key.clear();
      key.push_back(fe.name(i));
      key.push_back(static_cast<uint32_t>(fe.device(i)) * 2 + annotation_bit(i));
      if (group_by_input_shape) key.push_back(fe.input_shapes(i));
      if (stack_n > 0) {
        const auto& frames = fe.stacks.Get(fe.stack(i));
        key.insert(key.end(), frames.begin(), frames.begin() + std::min(frames.size(), stack_n));
      }
      auto [it, inserted] = index.emplace(key, static_cast<uint32_t>(first.size()));
      if (inserted) first.push_back(static_cast<uint32_t>(i));
      row_of[i] = it->second;
    }
  }

  // torch's first event of a row is the earliest in its (start, -end, input order) ordering.
  auto earlier = [&](uint32_t a, uint32_t b) {
    if (fe.start_ns(a) != fe.start_ns(b)) return fe.start_ns(a) < fe.start_ns(b);
    if (fe.end_ns(a) != fe.end_ns(b)) return fe.end_ns(a) > fe.end_ns(b);
    return fe.rank(a) < fe.rank(b);
  };
  // The sums, in parts over the events, each into its own rows; then the parts are added up.
  // Saturating: a hostile trace's times or sizes near int64's limit would overflow them.
  auto Add = [](int64_t& total, int64_t v) { total = SaturatingAdd(total, v); };
  const size_t parts = PartsFor(n);
  std::vector<std::vector<AverageRow>> part_rows(parts, std::vector<AverageRow>(first.size()));
  std::vector<std::vector<uint32_t>> part_first(parts, first);
  RunInParts(parts, [&](size_t part) {
    std::vector<AverageRow>& rows = part_rows[part];
    std::vector<uint32_t>& earliest = part_first[part];
    for (size_t i = PartBegin(n, part, parts), end = PartEnd(n, part, parts); i < end; ++i) {
      if (fe.removed(i)) continue;
      uint32_t r = row_of[i];
      if (earlier(static_cast<uint32_t>(i), earliest[r])) earliest[r] = static_cast<uint32_t>(i);
      AverageRow& row = rows[r];
      row.count += 1;
      Add(row.cpu_time_total_ns, fe.cpu_total_ns(i));
      Add(row.cuda_time_total_ns, fe.cuda_total_ns(i));
      Add(row.self_cpu_time_total_ns, fe.self_cpu_ns(i));
      Add(row.self_cuda_time_total_ns, fe.self_cuda_ns(i));
      Add(row.cpu_memory_usage, fe.cpu_memory(i));
      Add(row.cuda_memory_usage, fe.cuda_memory(i));
      Add(row.self_cpu_memory_usage, fe.self_cpu_memory(i));
      Add(row.self_cuda_memory_usage, fe.self_cuda_memory(i));
      Add(row.flops, fe.flops(i));
      Add(row.tc_self_ns, fe.tc_self_ns(i));
      Add(row.tc_total_ns, fe.tc_total_ns(i));
      if (samples) {
        row.self_cpu_samples += samples->self[i];
        row.cpu_samples += samples->total[i];
      }
    }
  });
  std::vector<AverageRow> rows = std::move(part_rows[0]);
  for (size_t part = 1; part < parts; ++part) {
    for (size_t r = 0; r < rows.size(); ++r) {
      const AverageRow& add = part_rows[part][r];
      AverageRow& row = rows[r];
      row.count += add.count;
      Add(row.cpu_time_total_ns, add.cpu_time_total_ns);
      Add(row.cuda_time_total_ns, add.cuda_time_total_ns);
      Add(row.self_cpu_time_total_ns, add.self_cpu_time_total_ns);
      Add(row.self_cuda_time_total_ns, add.self_cuda_time_total_ns);
      Add(row.cpu_memory_usage, add.cpu_memory_usage);
      Add(row.cuda_memory_usage, add.cuda_memory_usage);
      Add(row.self_cpu_memory_usage, add.self_cpu_memory_usage);
      Add(row.self_cuda_memory_usage, add.self_cuda_memory_usage);
      Add(row.flops, add.flops);
      Add(row.tc_self_ns, add.tc_self_ns);
      Add(row.tc_total_ns, add.tc_total_ns);
      row.self_cpu_samples += add.self_cpu_samples;
      row.cpu_samples += add.cpu_samples;
    }
  }
  for (size_t r = 0; r < first.size(); ++r) {
    for (size_t part = 0; part < parts; ++part) {
      if (earlier(part_first[part][r], first[r])) first[r] = part_first[part][r];
    }
  }
  for (size_t r = 0; r < rows.size(); ++r) {
    uint32_t e = first[r];
    AverageRow& row = rows[r];
    row.key = fe.name(e);
    row.device = fe.device(e);
    row.kind = fe.kind(e);
    row.is_user_annotation = fe.is_user_annotation(e);
    row.has_parent = fe.parent(e) >= 0;
    row.tc_eligible = fe.tc_eligible(e);
    if (group_by_input_shape) {
      row.input_shapes = fe.input_shapes(e);
      row.input_types = fe.input_types(e);
      row.concrete_inputs = fe.concrete_inputs(e);
    }
    const auto& frames = fe.stacks.Get(fe.stack(e));
    row.stack.assign(frames.begin(), frames.begin() + std::min(frames.size(), stack_n));
  }
  if (fe.has_float_times()) {
    // Float sums depend on their order: torch adds the events in its list's (start, -end) order.
    std::vector<uint32_t> sequence;
    sequence.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      if (!fe.removed(i)) sequence.push_back(static_cast<uint32_t>(i));
    }
    std::sort(sequence.begin(), sequence.end(), earlier);
    for (uint32_t i : sequence) {
      AverageRow& row = rows[row_of[i]];
      row.cpu_time_total_us += fe.cpu_total_us(i);
      row.self_cpu_time_total_us += fe.self_cpu_us(i);
      row.cuda_time_total_us += fe.cuda_total_us(i);
      row.self_cuda_time_total_us += fe.self_cuda_us(i);
    }
  } else {
    for (AverageRow& row : rows) {
      row.cpu_time_total_us = static_cast<double>(row.cpu_time_total_ns) / 1000.0;
      row.self_cpu_time_total_us = static_cast<double>(row.self_cpu_time_total_ns) / 1000.0;
      row.cuda_time_total_us = static_cast<double>(row.cuda_time_total_ns) / 1000.0;
      row.self_cuda_time_total_us = static_cast<double>(row.self_cuda_time_total_ns) / 1000.0;
    }
  }
  // Rows in the order torch's dict holds them: by first occurrence.
  std::vector<uint32_t> order(rows.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return earlier(first[a], first[b]); });
  out.rows.reserve(rows.size());
  for (uint32_t r : order) out.rows.push_back(std::move(rows[r]));
  out.events = std::move(events);
  return out;
}

}  // namespace profsh
