#include "engine/analysis/averages_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <unordered_map>
#include <variant>

#include "engine/util/saturating.h"
#include "engine/util/utf8.h"

namespace profsh {

namespace {

std::string Printf(const char* fmt, double v) {
  char buf[64];
  int n = std::snprintf(buf, sizeof(buf), fmt, v);
  return std::string(buf, static_cast<size_t>(n));
}

// A sort key's value: torch compares ints, floats or strings depending on the attribute.
using SortValue = std::variant<int64_t, double, std::string_view>;

struct SortKey {
  const char* name;
  std::function<SortValue(const AverageRow&, const StringPool&)> get;
};

const std::vector<SortKey>& SortKeyTable() {
  static const std::vector<SortKey> keys = [] {
    std::vector<SortKey> k;
    auto i64 = [](int64_t AverageRow::*field) {
      return [field](const AverageRow& r, const StringPool&) -> SortValue { return r.*field; };
    };
    k.push_back({"cpu_time", [](const AverageRow& r, const StringPool&) -> SortValue {
                   return r.cpu_time_us();
                 }});
    k.push_back({"cuda_time", [](const AverageRow& r, const StringPool&) -> SortValue {
                   return r.cuda_time_us();
                 }});
    // Times compare as torch's values do: whole microseconds (1.13) or its floats (2.x).
    auto f64 = [](double AverageRow::*field) {
      return [field](const AverageRow& r, const StringPool&) -> SortValue { return r.*field; };
    };
    k.push_back({"cpu_time_total", f64(&AverageRow::cpu_time_total_us)});
    k.push_back({"cuda_time_total", f64(&AverageRow::cuda_time_total_us)});
    k.push_back({"self_cpu_time_total", f64(&AverageRow::self_cpu_time_total_us)});
    k.push_back({"self_cuda_time_total", f64(&AverageRow::self_cuda_time_total_us)});
    k.push_back({"cpu_memory_usage", i64(&AverageRow::cpu_memory_usage)});
    k.push_back({"cuda_memory_usage", i64(&AverageRow::cuda_memory_usage)});
    k.push_back({"self_cpu_memory_usage", i64(&AverageRow::self_cpu_memory_usage)});
    k.push_back({"self_cuda_memory_usage", i64(&AverageRow::self_cuda_memory_usage)});
    k.push_back({"count", i64(&AverageRow::count)});
    k.push_back({"flops", i64(&AverageRow::flops)});
    k.push_back({"self_cpu_samples", i64(&AverageRow::self_cpu_samples)});
    k.push_back({"cpu_samples", i64(&AverageRow::cpu_samples)});
    k.push_back(
        {"node_id", [](const AverageRow&, const StringPool&) -> SortValue { return int64_t{-1}; }});
    k.push_back({"key", [](const AverageRow& r, const StringPool& t) -> SortValue {
                   return t.Get(r.key);
                 }});
    return k;
  }();
  return keys;
}

// Newer torch names device columns "device"; xpu and privateuse1 map to the same fields here.
std::string CanonicalSortKey(std::string key) {
  static const char* kDevices[] = {"device", "xpu", "privateuse1"};
  for (const char* d : kDevices) {
    size_t pos = key.find(d);
    if (pos != std::string::npos) {
      key.replace(pos, std::strlen(d), "cuda");
      break;
    }
  }
  return key;
}

const SortKey* FindSortKey(const std::string& name) {
  std::string canonical = CanonicalSortKey(name);
  for (const SortKey& k : SortKeyTable()) {
    if (canonical == k.name) return &k;
  }
  return nullptr;
}

// Python's '{: >w}' / '{: <w}': pads to w code points, never truncates.
void AppendPadded(std::string& out, std::string_view text, size_t width, bool left_align) {
  size_t len = Utf8Length(text);
  size_t pad = len < width ? width - len : 0;
  if (left_align) {
    out.append(text);
    out.append(pad, ' ');
  } else {
    out.append(pad, ' ');
    out.append(text);
  }
}

}  // namespace

bool IsSortKey(const std::string& key) {
  const auto& keys = SortKeys();
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

const std::vector<std::string>& SortKeys() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const SortKey& k : SortKeyTable()) out.push_back(k.name);
    for (const char* alias :
         {"device_time", "device_time_total", "self_device_time_total", "device_memory_usage",
          "self_device_memory_usage", "xpu_time", "xpu_time_total", "self_xpu_time_total",
          "xpu_memory_usage", "self_xpu_memory_usage"}) {
      out.push_back(alias);
    }
    return out;
  }();
  return names;
}

std::string FormatTime(double time_us, const std::optional<std::string>& unit) {
  constexpr double kUsInSecond = 1000.0 * 1000.0;
  constexpr double kUsInMs = 1000.0;
  if (unit) {
    if (*unit == "s") return Printf("%.3fs", time_us / kUsInSecond);
    if (*unit == "ms") return Printf("%.3fms", time_us / kUsInMs);
    return Printf("%.3fus", time_us);
  }
  if (time_us >= kUsInSecond) return Printf("%.3fs", time_us / kUsInSecond);
  if (time_us >= kUsInMs) return Printf("%.3fms", time_us / kUsInMs);
  return Printf("%.3fus", time_us);
}

std::string FormatTimeShare(double time_us, double total_us) {
  if (total_us == 0) return "NaN";
  return Printf("%.2f%%", time_us * 100.0 / total_us);
}

std::string FormatMemory(int64_t nbytes) {
  constexpr uint64_t kKB = 1024, kMB = 1024 * kKB, kGB = 1024 * kMB;
  // Unsigned: a saturated sum of hostile frees is INT64_MIN, which has no negation in int64.
  const uint64_t magnitude =
      nbytes < 0 ? 0 - static_cast<uint64_t>(nbytes) : static_cast<uint64_t>(nbytes);
  if (magnitude >= kGB) return Printf("%.2f Gb", static_cast<double>(nbytes) * 1.0 / kGB);
  if (magnitude >= kMB) return Printf("%.2f Mb", static_cast<double>(nbytes) * 1.0 / kMB);
  if (magnitude >= kKB) return Printf("%.2f Kb", static_cast<double>(nbytes) * 1.0 / kKB);
  return std::to_string(nbytes) + " b";
}

Result<std::vector<uint32_t>> SortedRowOrder(const KeyAverages& averages,
                                             const std::string& sort_by) {
  const StringPool& strings = averages.events->strings;
  const SortKey* key = FindSortKey(sort_by);
  if (key == nullptr) {
    std::string valid;
    for (const auto& k : SortKeys()) valid += (valid.empty() ? "" : ", ") + k;
    return Error{"unknown sort_by key '" + sort_by + "' (valid keys: " + valid + ")"};
  }
  const std::vector<AverageRow>& rows = averages.rows;
  std::vector<SortValue> values(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) values[i] = key->get(rows[i], strings);
  std::vector<uint32_t> order(rows.size());
  std::iota(order.begin(), order.end(), 0);
  // Python's sorted(..., reverse=True) is stable: equal keys keep their order.
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return values[b] < values[a]; });
  return order;
}

Result<std::string> BuildAveragesTable(const KeyAverages& averages, const TableOptions& options) {
  const StringPool& strings = averages.events->strings;
  const std::vector<AverageRow>& all = averages.rows;
  if (all.empty()) return std::string();
  const TorchFormat format = options.torch_format.value_or(averages.torch_format);

  std::vector<uint32_t> order(all.size());
  std::iota(order.begin(), order.end(), 0);
  if (options.sort_by) {
    auto sorted = SortedRowOrder(averages, *options.sort_by);
    if (!sorted.ok()) return sorted.error();
    order = std::move(sorted.value());
  }

  bool has_cuda_time = false, has_cuda_mem = false, has_input_shapes = false;
  for (const AverageRow& r : all) {
    has_cuda_time |= r.self_cuda_time_total_us > 0;
    has_cuda_mem |= r.self_cuda_memory_usage > 0;
    has_input_shapes |= averages.group_by_input_shape && r.input_shapes != 0;
  }
  const bool profile_memory = averages.profile_memory;

  // Column widths are computed over every row, printed or not.
  size_t name_width = 0;
  size_t shapes_width = 0;
  size_t src_width = 0;
  bool has_stack = false;
  // Shapes are values until here: Python's str() of each distinct one, as torch prints them.
  std::unordered_map<uint32_t, std::string> shapes_repr;
  if (averages.group_by_input_shape) {
    for (const AverageRow& r : all) {
      if (!shapes_repr.contains(r.input_shapes))
        shapes_repr.emplace(r.input_shapes,
                            PythonRepr(averages.events->inputs.Get(r.input_shapes)));
    }
  }
  auto shapes_text = [&](const AverageRow& r) -> std::string_view {
    if (!averages.group_by_input_shape) return "";
    return shapes_repr.at(r.input_shapes);
  };
  for (const AverageRow& r : all) {
    name_width = std::max(name_width, Utf8Length(strings.Get(r.key)));
    shapes_width = std::max(shapes_width, Utf8Length(shapes_text(r)));
    if (!r.stack.empty()) {
      has_stack = true;
      for (uint32_t frame : r.stack)
        src_width = std::max(src_width, Utf8Length(strings.Get(frame)));
    }
  }
  name_width += 4;
  if (options.max_name_column_width) {
    name_width = std::min<int64_t>(name_width, *options.max_name_column_width);
  }
  shapes_width += 4;
  if (options.max_shapes_column_width) {
    shapes_width = std::min<int64_t>(shapes_width, *options.max_shapes_column_width);
  }
  if (has_stack) {
    src_width += 4;
    if (options.max_src_column_width)
      src_width = std::min<int64_t>(src_width, *options.max_src_column_width);
  }

  constexpr size_t kDefaultWidth = 12;
  constexpr size_t kSpacing = 2;
  const std::string& device = averages.events->device_name;
  const std::string self_device = std::string("Self ").append(device);
  std::vector<std::string> headers = {"Name",        "Self CPU %", "Self CPU",
                                      "CPU total %", "CPU total",  "CPU time avg"};
  if (has_cuda_time) {
    for (const char* suffix : {"", " %"}) headers.push_back(self_device + suffix);
    for (const char* suffix : {" total", " time avg"}) headers.push_back(device + suffix);
  }
  if (profile_memory) {
    headers.push_back("CPU Mem");
    headers.push_back("Self CPU Mem");
    if (has_cuda_mem) {
      headers.push_back(device + " Mem");
      headers.push_back(self_device + " Mem");
    }
  }
  headers.push_back("# of Calls");

  struct Column {
    size_t width;
    bool left;
  };
  std::vector<Column> columns;
  std::string header_sep;
  int64_t line_length = -static_cast<int64_t>(kSpacing);
  auto add_column = [&](size_t width, bool left = false) {
    columns.push_back({width, left});
    header_sep.append(width, '-');
    header_sep.append(kSpacing, ' ');
    line_length += static_cast<int64_t>(width + kSpacing);
  };
  add_column(name_width);
  for (size_t i = 1; i < headers.size(); ++i) add_column(kDefaultWidth);
  if (has_input_shapes) {
    headers.push_back("Input Shapes");
    add_column(shapes_width);
  }
  if (has_stack) {
    headers.push_back("Source Location");
    add_column(src_width, /*left=*/true);
  }
  bool with_flops = averages.with_flops;
  double flops_scale = 1;
  if (with_flops) {
    int64_t min_flops = 0;
    for (const AverageRow& r : all) {
      if (r.flops > 0 && (min_flops == 0 || r.flops < min_flops)) min_flops = r.flops;
    }
    if (min_flops > 0) {
      static const char* kFlopHeaders[] = {"FLOPs",  "KFLOPs", "MFLOPs",
                                           "GFLOPs", "TFLOPs", "PFLOPs"};
      double log_flops =
          std::max(0.0, std::min(std::log10(static_cast<double>(min_flops)) / 3, 5.0));
      flops_scale = std::pow(10.0, std::floor(log_flops) * -3.0);
      headers.push_back(std::string("Total ") + kFlopHeaders[static_cast<int>(log_flops)]);
      add_column(kDefaultWidth);
    } else {
      with_flops = false;
    }
  }
  // Activity cpu: two columns torch has not (after its own, so its columns keep their places).
  if (averages.has_samples) {
    headers.push_back("Self samples");
    add_column(kDefaultWidth);
    headers.push_back("Samples");
    add_column(kDefaultWidth);
  }

  auto format_row = [&](const std::vector<std::string>& values) {
    std::string line;
    for (size_t c = 0; c < columns.size(); ++c) {
      AppendPadded(line, c < values.size() ? values[c] : std::string(), columns[c].width,
                   columns[c].left);
      line.append(kSpacing, ' ');
    }
    return line;
  };

  // torch sums in the printed (sorted) order; with 2.x's float times the order shows in the
  // last bits. Exact times are summed exactly, as 1.13's integers are.
  // 2.x's footer leaves gpu_user_annotation rows out of the device total; 1.13's counts them.
  const bool annotations_in_total = format == TorchFormat::k113;
  auto in_device_total = [&](const AverageRow& r) {
    return r.device == DeviceType::kCuda && (annotations_in_total || !r.is_user_annotation);
  };
  double sum_self_cpu = 0, sum_self_cuda = 0;
  if (averages.events->has_float_times()) {
    for (uint32_t index : order) {
      const AverageRow& r = all[index];
      sum_self_cpu += r.self_cpu_time_total_us;
      if (in_device_total(r)) sum_self_cuda += r.self_cuda_time_total_us;
    }
  } else {
    int64_t cpu_ns = 0, cuda_ns = 0;
    for (const AverageRow& r : all) {
      cpu_ns = SaturatingAdd(cpu_ns, r.self_cpu_time_total_ns);
      if (in_device_total(r)) cuda_ns = SaturatingAdd(cuda_ns, r.self_cuda_time_total_ns);
    }
    sum_self_cpu = static_cast<double>(cpu_ns) / 1000.0;
    sum_self_cuda = static_cast<double>(cuda_ns) / 1000.0;
  }
  const auto& unit = options.time_unit;

  std::string result;
  auto append = [&](const std::string& s) {
    result.append(s);
    result.push_back('\n');
  };
  if (options.header) {
    append(std::string(static_cast<size_t>(std::max<int64_t>(line_length, 0)), '='));
    append(*options.header);
  }
  if (options.top_level_events_only) {
    append(std::string(static_cast<size_t>(std::max<int64_t>(line_length, 0)), '='));
    append("This report only display top-level ops statistics");
  }
  append(header_sep);
  append(format_row(headers));
  append(header_sep);

  auto trim_path = [&](std::string_view path) -> std::string {
    size_t len = Utf8Length(path);
    if (len > src_width) {
      std::string_view tail = Utf8DropPrefix(path, len - src_width);
      if (Utf8Length(tail) > 3) return "..." + std::string(Utf8DropPrefix(tail, 3));
      return std::string(tail);
    }
    return std::string(path);
  };

  int64_t printed = 0;
  for (uint32_t index : order) {
    if (printed == options.row_limit) break;
    const AverageRow& r = all[index];
    if (options.top_level_events_only && r.has_parent) continue;
    ++printed;
    std::string name(strings.Get(r.key));
    if (options.max_name_column_width &&
        static_cast<int64_t>(Utf8Length(name)) >= *options.max_name_column_width - 3) {
      name = std::string(Utf8Prefix(name, static_cast<size_t>(std::max<int64_t>(
                                              *options.max_name_column_width - 3, 0)))) +
             "...";
    }
    std::vector<std::string> values = {
        name,
        FormatTimeShare(r.self_cpu_time_total_us, sum_self_cpu),
        FormatTime(r.self_cpu_time_total_us, unit),
        FormatTimeShare(r.cpu_time_total_us, sum_self_cpu),
        FormatTime(r.cpu_time_total_us, unit),
        FormatTime(r.cpu_time_us(), unit),
    };
    if (has_cuda_time) {
      values.push_back(FormatTime(r.self_cuda_time_total_us, unit));
      values.push_back(FormatTimeShare(r.self_cuda_time_total_us, sum_self_cuda));
      values.push_back(FormatTime(r.cuda_time_total_us, unit));
      values.push_back(FormatTime(r.cuda_time_us(), unit));
    }
    if (profile_memory) {
      values.push_back(FormatMemory(r.cpu_memory_usage));
      values.push_back(FormatMemory(r.self_cpu_memory_usage));
      if (has_cuda_mem) {
        values.push_back(FormatMemory(r.cuda_memory_usage));
        values.push_back(FormatMemory(r.self_cuda_memory_usage));
      }
    }
    values.push_back(std::to_string(r.count));
    if (has_input_shapes) {
      values.push_back(std::string(Utf8Prefix(shapes_text(r), shapes_width)));
    }
    // torch appends FLOPs before the source field, while its header lists Source Location
    // first; with both columns the two trade places. Kept on purpose.
    if (with_flops) {
      values.push_back(r.flops <= 0 ? std::string("--")
                                    : Printf("%8.3f", static_cast<double>(r.flops) * flops_scale));
    }
    if (has_stack) {
      values.push_back(r.stack.empty() ? std::string() : trim_path(strings.Get(r.stack[0])));
    }
    if (averages.has_samples) {
      values.push_back(std::to_string(r.self_cpu_samples));
      values.push_back(std::to_string(r.cpu_samples));
    }
    append(format_row(values));
    if (has_stack) {
      std::vector<std::string> extra(headers.size() - 1);
      // 1.13 prints at most five frames (MAX_STACK_ENTRY); 2.x prints every one it grouped by.
      const size_t frames = format == TorchFormat::k2 ? r.stack.size() : 5;
      for (size_t f = 1; f < r.stack.size() && f < frames; ++f) {
        extra.push_back(trim_path(strings.Get(r.stack[f])));
        append(format_row(extra));
        extra.pop_back();
      }
      extra.push_back("");
      append(format_row(extra));
    }
  }
  append(header_sep);
  append("Self CPU time total: " + FormatTime(sum_self_cpu, unit));
  if (has_cuda_time) append(self_device + " time total: " + FormatTime(sum_self_cuda, unit));
  return result;
}

}  // namespace profsh
