#include "engine/analysis/function_events.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <unordered_map>

#include "engine/util/hash.h"

namespace profsh {

namespace {

enum class CategoryClass : uint8_t { kCpu, kRuntime, kDevice, kDeviceAnnotation, kSkip };

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

CategoryClass Classify(std::string_view category) {
  std::string c = Lower(category);
  if (c == "kernel" || c == "gpu_memcpy" || c == "gpu_memset" || c == "memcpy" || c == "memset") {
    return CategoryClass::kDevice;
  }
  if (c == "gpu_user_annotation") return CategoryClass::kDeviceAnnotation;
  if (c == "cuda_runtime" || c == "cuda_driver" || c == "runtime" || c == "driver" ||
      c == "privateuse1_runtime" || c == "privateuse1_driver" || c == "mtia_runtime") {
    return CategoryClass::kRuntime;
  }
  if (c == "trace" || c == "ac2g" || c == "fwdbwd" || c == "async_cpu_to_gpu" ||
      c == "cpu_to_cuda" || c == "cuda_sync" || c == "cuda_event" || c == "overhead" ||
      c == "python_function" || c == "external_correlation" || c == "cuda_profiler_range" ||
      c == "gpu_memory" || c == "cpu_instant_event") {
    return CategoryClass::kSkip;
  }
  return CategoryClass::kCpu;
}

// torch's _filter_name: utility ops that never appear in the tables.
bool IsFilteredName(std::string_view name) {
  return name == "[memory]" || name == "[OutOfMemory]" ||
         name == "profiler::_record_function_enter" ||
         name == "profiler::_record_function_enter_new" ||
         name == "profiler::_record_function_exit" || name == "aten::is_leaf" ||
         name == "aten::output_nr" || name == "aten::_version";
}

// torch's _filter_stack_entry.
bool KeepStackFrame(std::string_view frame) {
  static const std::pair<std::string_view, std::string_view> kFiltered[] = {
      {"autograd/__init__", "_make_grads"},
      {"autograd/__init__", "backward"},
      {"torch/tensor", "backward"},
      {"_internal/common_utils", "prof_callable"},
      {"_internal/common_utils", "prof_func_call"},
      {"_internal/common_utils", "prof_meth_call"},
  };
  for (const auto& [a, b] : kFiltered) {
    if (frame.find(a) != std::string_view::npos && frame.find(b) != std::string_view::npos)
      return false;
  }
  return true;
}

struct Keys {
  std::optional<uint32_t> external_id, correlation, input_dims, call_stack, sequence_nr, fwd_thread,
      bytes, device_type, flops;
  explicit Keys(const StringPool& s)
      : external_id(s.Find("External id")),
        correlation(s.Find("correlation")),
        input_dims(s.Find("Input Dims")),
        call_stack(s.Find("Call stack")),
        sequence_nr(s.Find("Sequence number")),
        fwd_thread(s.Find("Fwd thread id")),
        bytes(s.Find("Bytes")),
        device_type(s.Find("Device Type")),
        flops(s.Find("flops")) {}
};

bool GetInt(const ArgStore::View& view, const std::optional<uint32_t>& key, int64_t* out) {
  if (!key) return false;
  ArgValue v;
  if (!view.Find(*key, &v) || !v.is_number()) return false;
  *out = v.AsInt();
  return true;
}

struct MemoryRecord {
  int64_t ts;
  int64_t cpu_bytes;
  int64_t cuda_bytes;
  uint32_t thread;
  uint32_t order;
};

bool IsCpuMemoryDevice(int64_t device_type) {
  // c10::DeviceType CPU=0, MKLDNN=2, IDEEP=5
  return device_type == 0 || device_type == 2 || device_type == 5;
}
bool IsCudaMemoryDevice(int64_t device_type) {
  return device_type == 1 || device_type == 6;
}

}  // namespace

uint32_t StackTable::Intern(const std::vector<uint32_t>& frames) {
  if (frames.empty()) return 0;
  uint64_t h = HashBytes(reinterpret_cast<const char*>(frames.data()), frames.size() * 4);
  size_t mask = slots_.size() - 1;
  size_t pos = h & mask;
  while (slots_[pos] != 0) {
    if (stacks_[slots_[pos]] == frames) return slots_[pos];
    pos = (pos + 1) & mask;
  }
  uint32_t id = static_cast<uint32_t>(stacks_.size());
  stacks_.push_back(frames);
  slots_[pos] = id;
  if (stacks_.size() * 2 > slots_.size()) Grow();
  return id;
}

void StackTable::Grow() {
  std::vector<uint32_t> bigger(slots_.size() * 2, 0);
  size_t mask = bigger.size() - 1;
  for (uint32_t id = 1; id < stacks_.size(); ++id) {
    const auto& f = stacks_[id];
    size_t pos = HashBytes(reinterpret_cast<const char*>(f.data()), f.size() * 4) & mask;
    while (bigger[pos] != 0) pos = (pos + 1) & mask;
    bigger[pos] = id;
  }
  slots_.swap(bigger);
}

namespace {

void AppendPythonRepr(std::string_view json, size_t* pos, std::string* out) {
  auto skip_ws = [&] {
    while (*pos < json.size() &&
           (json[*pos] == ' ' || json[*pos] == '\n' || json[*pos] == '\t' || json[*pos] == '\r'))
      ++*pos;
  };
  skip_ws();
  if (*pos >= json.size()) return;
  char c = json[*pos];
  if (c == '[' || c == '{') {
    char close = c == '[' ? ']' : '}';
    out->push_back(c);
    ++*pos;
    bool first = true;
    while (true) {
      skip_ws();
      if (*pos >= json.size()) return;
      if (json[*pos] == close) {
        ++*pos;
        break;
      }
      if (json[*pos] == ',') {
        ++*pos;
        continue;
      }
      if (!first) out->append(", ");
      first = false;
      AppendPythonRepr(json, pos, out);
      skip_ws();
      if (close == '}' && *pos < json.size() && json[*pos] == ':') {
        ++*pos;
        out->append(": ");
        AppendPythonRepr(json, pos, out);
      }
    }
    out->push_back(close);
    return;
  }
  if (c == '"') {
    size_t end = *pos + 1;
    std::string raw;
    while (end < json.size() && json[end] != '"') {
      if (json[end] == '\\' && end + 1 < json.size())
        raw.push_back(json[++end]);
      else
        raw.push_back(json[end]);
      ++end;
    }
    *pos = end + 1;
    out->push_back('\'');
    for (char ch : raw) {
      if (ch == '\'' || ch == '\\') out->push_back('\\');
      out->push_back(ch);
    }
    out->push_back('\'');
    return;
  }
  size_t start = *pos;
  while (*pos < json.size() && json[*pos] != ',' && json[*pos] != ']' && json[*pos] != '}' &&
         json[*pos] != ' ') {
    ++*pos;
  }
  std::string_view token = json.substr(start, *pos - start);
  if (token == "true")
    out->append("True");
  else if (token == "false")
    out->append("False");
  else if (token == "null")
    out->append("None");
  else
    out->append(token);
}

}  // namespace

std::string JsonToPythonRepr(std::string_view json) {
  std::string out;
  size_t pos = 0;
  AppendPythonRepr(json, &pos, &out);
  return out;
}

std::unique_ptr<FunctionEvents> BuildFunctionEvents(const Trace& trace) {
  auto result = std::make_unique<FunctionEvents>();
  FunctionEvents& fe = *result;
  const EventTable& ev = trace.events;
  const size_t n = ev.size();
  const Keys keys(trace.strings);

  std::vector<CategoryClass> category_class(trace.categories.size());
  for (size_t c = 0; c < trace.categories.size(); ++c) {
    category_class[c] = Classify(trace.category_name(static_cast<uint16_t>(c)));
  }
  StringPool& pool = fe.strings;
  const uint32_t profiler_step_star = pool.Intern("ProfilerStep*");
  const auto memory_name = trace.strings.Find("[memory]");
  const auto oom_name = trace.strings.Find("[OutOfMemory]");
  const uint32_t memory_row_name = pool.Intern("[memory]");
  const uint32_t oom_row_name = pool.Intern("[OutOfMemory]");
  const std::string evaluate_prefix = "autograd::engine::evaluate_function: ";

  // Per-name facts computed once per distinct name: filtered?, display name, recorded name.
  struct NameInfo {
    bool filtered;
    uint32_t display;
    uint32_t recorded;
  };
  std::unordered_map<uint32_t, NameInfo> name_info;
  auto info_for = [&](uint32_t name) -> NameInfo {
    auto it = name_info.find(name);
    if (it != name_info.end()) return it->second;
    std::string_view s = trace.str(name);
    NameInfo info{IsFilteredName(s), 0, 0};
    if (!info.filtered) {
      info.recorded = pool.Intern(s);
      info.display = s.starts_with("ProfilerStep#") ? profiler_step_star : info.recorded;
    }
    name_info.emplace(name, info);
    return info;
  };
  std::unordered_map<uint32_t, uint32_t> shapes_repr;  // Input Dims JSON id -> repr id (0 for [])
  std::unordered_map<uint32_t, uint32_t> stack_of;     // Call stack string id -> stack id

  std::vector<MemoryRecord> memory;
  std::vector<MemoryRecord> oom;
  struct DeviceLink {
    uint32_t fe_index;
    int64_t external_id;
    int64_t correlation;
    bool has_external, has_correlation;
  };
  std::vector<DeviceLink> device_links;
  std::vector<int64_t> fe_external(0);  // External id per FunctionEvent (or -1)
  std::vector<uint8_t> fe_is_runtime;
  std::unordered_map<int64_t, uint32_t> op_by_external;  // External id -> CPU op (not runtime)
  std::unordered_map<int64_t, uint32_t> runtime_by_correlation;

  for (size_t i = 0; i < n; ++i) {
    char ph = ev.phase(i);
    uint32_t name = ev.name(i);
    if (ph == 'i' || ph == 'I') {
      if ((memory_name && name == *memory_name) || (oom_name && name == *oom_name)) {
        auto view = trace.args.Get(ev.args(i));
        int64_t bytes = 0, device_type = 0;
        GetInt(view, keys.bytes, &bytes);
        GetInt(view, keys.device_type, &device_type);
        MemoryRecord r{ev.ts(i), IsCpuMemoryDevice(device_type) ? bytes : 0,
                       IsCudaMemoryDevice(device_type) ? bytes : 0, ev.track(i),
                       static_cast<uint32_t>(i)};
        (name == *memory_name && memory_name ? memory : oom).push_back(r);
      }
      continue;
    }
    if (ph != 'X') continue;
    CategoryClass cls = category_class[ev.category(i)];
    if (cls == CategoryClass::kSkip) continue;
    NameInfo info = info_for(name);
    if (info.filtered) continue;
    FunctionEvent f;
    f.name = info.display;
    f.trace_name = info.recorded;
    f.event = static_cast<uint32_t>(i);
    f.thread = ev.track(i);
    f.start_ns = ev.ts(i);
    f.end_ns = ev.end(i);
    auto view = trace.args.Get(ev.args(i));
    int64_t external = -1, correlation = -1;
    bool has_external = GetInt(view, keys.external_id, &external);
    bool has_correlation = GetInt(view, keys.correlation, &correlation);
    uint32_t index = static_cast<uint32_t>(fe.events.size());
    if (cls == CategoryClass::kDevice || cls == CategoryClass::kDeviceAnnotation) {
      f.device = DeviceType::kCuda;
      f.is_user_annotation = cls == CategoryClass::kDeviceAnnotation;
      f.cuda_total_ns = f.end_ns - f.start_ns;
      if (cls == CategoryClass::kDevice) {
        device_links.push_back({index, external, correlation, has_external, has_correlation});
      }
    } else {
      if (ArgValue v;
          keys.input_dims && view.Find(*keys.input_dims, &v) && v.type == ArgType::kJson) {
        auto it = shapes_repr.find(v.str);
        if (it == shapes_repr.end()) {
          std::string repr = JsonToPythonRepr(trace.str(v.str));
          it = shapes_repr.emplace(v.str, repr == "[]" ? 0 : pool.Intern(repr)).first;
        }
        f.input_shapes = it->second;
      }
      if (ArgValue v;
          keys.call_stack && view.Find(*keys.call_stack, &v) && v.type == ArgType::kString) {
        auto it = stack_of.find(v.str);
        if (it == stack_of.end()) {
          std::vector<uint32_t> frames;
          std::string_view text = trace.str(v.str);
          size_t start = 0;
          while (start <= text.size() && !text.empty()) {
            size_t semi = text.find(';', start);
            std::string_view frame = text.substr(
                start, semi == std::string_view::npos ? std::string_view::npos : semi - start);
            if (KeepStackFrame(frame)) frames.push_back(pool.Intern(frame));
            if (semi == std::string_view::npos) break;
            start = semi + 1;
          }
          it = stack_of.emplace(v.str, fe.stacks.Intern(frames)).first;
        }
        f.stack = it->second;
      }
      GetInt(view, keys.sequence_nr, &f.sequence_nr);
      GetInt(view, keys.fwd_thread, &f.fwd_thread);
      int64_t flops = 0;
      if (GetInt(view, keys.flops, &flops)) f.flops = flops;
      if (cls == CategoryClass::kRuntime) {
        if (has_correlation) runtime_by_correlation.emplace(correlation, index);
      } else if (has_external) {
        op_by_external.emplace(external, index);
      }
    }
    fe.events.push_back(f);
    fe_is_runtime.push_back(cls == CategoryClass::kRuntime);
  }
  fe.memory_records = memory.size();

  // Memory: every record whose time lies within a CPU op's [start, end] counts for that op
  // (torch 1.13 matches by time on any thread; profsh keeps it within the same process).
  std::vector<uint32_t> pid_of_track(trace.tracks.size());
  {
    std::unordered_map<int64_t, uint32_t> numeric;
    std::unordered_map<uint32_t, uint32_t> named;
    for (uint32_t t = 0; t < trace.tracks.size(); ++t) {
      const Ident& pid = trace.tracks[t].pid;
      uint32_t next = static_cast<uint32_t>(numeric.size() + named.size());
      pid_of_track[t] = pid.is_string ? named.emplace(pid.str, next).first->second
                                      : numeric.emplace(pid.number, next).first->second;
    }
  }
  std::vector<bool> memory_used(memory.size(), false);
  if (!memory.empty()) {
    std::vector<uint32_t> order(memory.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      uint32_t pa = pid_of_track[memory[a].thread], pb = pid_of_track[memory[b].thread];
      if (pa != pb) return pa < pb;
      return memory[a].ts < memory[b].ts;
    });
    std::vector<int64_t> cpu_prefix(order.size() + 1, 0), cuda_prefix(order.size() + 1, 0);
    for (size_t k = 0; k < order.size(); ++k) {
      cpu_prefix[k + 1] = cpu_prefix[k] + memory[order[k]].cpu_bytes;
      cuda_prefix[k + 1] = cuda_prefix[k] + memory[order[k]].cuda_bytes;
    }
    std::vector<int32_t> coverage(order.size() + 1, 0);
    auto key_less = [&](uint32_t idx, std::pair<uint32_t, int64_t> key) {
      uint32_t p = pid_of_track[memory[idx].thread];
      return p != key.first ? p < key.first : memory[idx].ts < key.second;
    };
    auto key_greater = [&](std::pair<uint32_t, int64_t> key, uint32_t idx) {
      uint32_t p = pid_of_track[memory[idx].thread];
      return p != key.first ? key.first < p : key.second < memory[idx].ts;
    };
    for (FunctionEvent& f : fe.events) {
      if (f.device != DeviceType::kCpu) continue;
      uint32_t pid = pid_of_track[f.thread];
      auto lo =
          std::lower_bound(order.begin(), order.end(), std::make_pair(pid, f.start_ns), key_less);
      auto hi =
          std::upper_bound(order.begin(), order.end(), std::make_pair(pid, f.end_ns), key_greater);
      size_t a = static_cast<size_t>(lo - order.begin()),
             b = static_cast<size_t>(hi - order.begin());
      if (a >= b) continue;
      f.cpu_memory = cpu_prefix[b] - cpu_prefix[a];
      f.cuda_memory = cuda_prefix[b] - cuda_prefix[a];
      coverage[a] += 1;
      coverage[b] -= 1;
    }
    int32_t running = 0;
    for (size_t k = 0; k < order.size(); ++k) {
      running += coverage[k];
      if (running > 0) memory_used[order[k]] = true;
    }
  }

  // Device work launched under a newer Kineto convention (External id differs from the CUPTI
  // correlation) names its CPU op directly; the runtime call is moved to that op's thread.
  std::vector<int32_t> device_op(device_links.size(), -1);
  for (size_t k = 0; k < device_links.size(); ++k) {
    const DeviceLink& d = device_links[k];
    if (!(d.has_external && d.has_correlation && d.external_id != d.correlation)) continue;
    auto op = op_by_external.find(d.external_id);
    if (op == op_by_external.end()) continue;
    device_op[k] = static_cast<int32_t>(op->second);
    auto rt = runtime_by_correlation.find(d.correlation);
    if (rt != runtime_by_correlation.end())
      fe.events[rt->second].thread = fe.events[op->second].thread;
  }

  // Lone memory records become rows of their own, then everything is put in torch's order.
  std::vector<uint32_t> fe_order;
  {
    auto add_lone = [&](const MemoryRecord& r, uint32_t name) {
      FunctionEvent f;
      f.name = name;
      f.trace_name = name;
      f.thread = r.thread;
      f.start_ns = f.end_ns = r.ts;
      f.cpu_memory = r.cpu_bytes;
      f.cuda_memory = r.cuda_bytes;
      fe.events.push_back(f);
      fe_is_runtime.push_back(false);
    };
    for (size_t k = 0; k < memory.size(); ++k) {
      if (!memory_used[k]) add_lone(memory[k], memory_row_name);
    }
    for (const MemoryRecord& r : oom) add_lone(r, oom_row_name);
    fe_order.resize(fe.events.size());
    std::iota(fe_order.begin(), fe_order.end(), 0);
    std::stable_sort(fe_order.begin(), fe_order.end(), [&](uint32_t a, uint32_t b) {
      const FunctionEvent& x = fe.events[a];
      const FunctionEvent& y = fe.events[b];
      if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
      return x.end_ns > y.end_ns;
    });
  }
  std::vector<uint32_t> new_index(fe.events.size());
  {
    std::vector<FunctionEvent> sorted;
    std::vector<uint8_t> runtime_sorted;
    sorted.reserve(fe.events.size());
    for (uint32_t k = 0; k < fe_order.size(); ++k) {
      new_index[fe_order[k]] = k;
      sorted.push_back(fe.events[fe_order[k]]);
      runtime_sorted.push_back(fe_is_runtime[fe_order[k]]);
    }
    fe.events.swap(sorted);
    fe_is_runtime.swap(runtime_sorted);
    for (auto& op : device_op) {
      if (op >= 0) op = static_cast<int32_t>(new_index[op]);
    }
    std::unordered_map<int64_t, uint32_t> remapped;
    for (auto& [corr, idx] : runtime_by_correlation) remapped.emplace(corr, new_index[idx]);
    runtime_by_correlation.swap(remapped);
    for (auto& d : device_links) d.fe_index = new_index[d.fe_index];
  }
  std::vector<FunctionEvent>& events = fe.events;

  // Nesting per thread (torch's _populate_cpu_children).
  {
    std::unordered_map<uint32_t, std::vector<uint32_t>> stacks;
    for (uint32_t k = 0; k < events.size(); ++k) {
      FunctionEvent& e = events[k];
      if (e.is_async || e.device != DeviceType::kCpu) continue;
      std::vector<uint32_t>& open = stacks[e.thread];
      while (!open.empty()) {
        FunctionEvent& parent = events[open.back()];
        if (e.start_ns >= parent.end_ns || e.end_ns > parent.end_ns) {
          open.pop_back();
        } else {
          e.parent = static_cast<int32_t>(open.back());
          parent.child_count += 1;
          break;
        }
      }
      open.push_back(k);
    }
  }

  // Backward functions (torch's RecordScope::BACKWARD_FUNCTION, which traces do not record):
  // the autograd node X that a "autograd::engine::evaluate_function: X" range wraps on the same
  // thread. Microsecond rounding can make the node stick out of its wrapper, so the test is that
  // the node starts within the latest such wrapper, not that it nests inside it.
  {
    std::unordered_map<uint64_t, std::vector<std::pair<int64_t, int64_t>>>
        wrappers;  // (thread, node) -> spans
    auto wrapper_key = [](uint32_t thread, uint32_t node) {
      return (static_cast<uint64_t>(thread) << 32) | node;
    };
    for (const FunctionEvent& e : events) {
      if (e.device != DeviceType::kCpu) continue;
      std::string_view name = pool.Get(e.trace_name);
      if (!name.starts_with(evaluate_prefix)) continue;
      uint32_t node = pool.Intern(name.substr(evaluate_prefix.size()));
      wrappers[wrapper_key(e.thread, node)].emplace_back(e.start_ns, e.end_ns);
    }
    if (!wrappers.empty()) {
      for (auto& [key, spans] : wrappers) std::stable_sort(spans.begin(), spans.end());
      for (FunctionEvent& e : events) {
        if (e.device != DeviceType::kCpu) continue;
        auto it = wrappers.find(wrapper_key(e.thread, e.trace_name));
        if (it == wrappers.end()) continue;
        const auto& spans = it->second;
        auto after =
            std::upper_bound(spans.begin(), spans.end(), std::make_pair(e.start_ns, INT64_MAX));
        if (after == spans.begin()) continue;
        --after;
        e.is_backward_function = e.start_ns <= after->second;
      }
    }
  }

  // Device work of older traces (External id == correlation): the op whose interval holds the
  // runtime call, i.e. the call's parent.
  for (size_t k = 0; k < device_links.size(); ++k) {
    const DeviceLink& d = device_links[k];
    int32_t op = device_op[k];
    if (op < 0 && d.has_correlation) {
      auto rt = runtime_by_correlation.find(d.correlation);
      if (rt != runtime_by_correlation.end()) op = events[rt->second].parent;
    }
    if (op < 0 && d.has_external && (!d.has_correlation || d.external_id != d.correlation)) {
      auto it = op_by_external.find(d.external_id);
      if (it != op_by_external.end()) op = static_cast<int32_t>(new_index[it->second]);
    }
    if (op < 0) continue;
    FunctionEvent& target = events[op];
    if (target.device != DeviceType::kCpu || target.is_async) continue;
    target.kernel_ns += events[d.fe_index].end_ns - events[d.fe_index].start_ns;
  }

  // torch's _remove_dup_nodes: a lone child with its parent's name merges into the parent,
  // which takes over its children and kernels. A removed event's children find their new
  // parent by following removed links, as torch's re-parenting does within the same pass.
  std::vector<bool> removed(events.size(), false);
  {
    auto resolve = [&](int32_t p) {
      while (p >= 0 && removed[p]) p = events[p].parent;
      return p;
    };
    bool changed = true;
    while (changed) {
      changed = false;
      for (uint32_t k = 0; k < events.size(); ++k) {
        if (removed[k]) continue;
        FunctionEvent& e = events[k];
        e.parent = resolve(e.parent);
        if (e.parent < 0) continue;
        FunctionEvent& parent = events[e.parent];
        if (parent.name != e.name || parent.child_count != 1) continue;
        parent.child_count = e.child_count;
        parent.kernel_ns = e.kernel_ns;
        removed[k] = true;
        changed = true;
      }
    }
  }

  // Backward ops take the stack of their forward op (torch's _set_backward_stacktraces). The
  // forward op is found by sequence number; JSON traces give no usable thread id to match on.
  {
    auto bw_parent = [&](uint32_t k) -> int32_t {
      int32_t p = static_cast<int32_t>(k);
      while (p >= 0) {
        if (events[p].is_backward_function) return p;
        p = events[p].parent;
      }
      return -1;
    };
    std::unordered_map<int64_t, uint32_t> forward_stack;
    std::vector<int32_t> bw(events.size(), -1);
    for (uint32_t k = 0; k < events.size(); ++k) {
      if (removed[k]) continue;
      bw[k] = bw_parent(k);
      if (bw[k] < 0 && events[k].sequence_nr >= 0)
        forward_stack.emplace(events[k].sequence_nr, events[k].stack);
    }
    for (uint32_t k = 0; k < events.size(); ++k) {
      if (removed[k] || bw[k] < 0) continue;
      const FunctionEvent& p = events[bw[k]];
      uint32_t stack = 0;
      if (p.sequence_nr >= 0) {
        auto it = forward_stack.find(p.sequence_nr);
        if (it != forward_stack.end()) stack = it->second;
      }
      events[k].stack = stack;
    }
  }

  // Drop merged events, then accumulate children's totals bottom-up (children follow parents).
  {
    std::vector<int32_t> remap(events.size(), -1);
    std::vector<FunctionEvent> kept;
    kept.reserve(events.size());
    for (uint32_t k = 0; k < events.size(); ++k) {
      if (removed[k]) continue;
      remap[k] = static_cast<int32_t>(kept.size());
      kept.push_back(events[k]);
    }
    for (FunctionEvent& e : kept) {
      if (e.parent >= 0) e.parent = remap[e.parent];
    }
    events.swap(kept);
  }
  for (FunctionEvent& e : events) {
    if (e.device == DeviceType::kCpu && !e.is_async) e.cuda_total_ns = e.kernel_ns;
  }
  for (size_t k = events.size(); k-- > 0;) {
    FunctionEvent& e = events[k];
    if (e.parent < 0) continue;
    FunctionEvent& p = events[e.parent];
    p.children_cpu_ns += e.cpu_total_ns();
    p.children_cpu_memory += e.cpu_memory;
    p.children_cuda_memory += e.cuda_memory;
    int64_t child_cuda = e.is_async ? 0 : e.cuda_total_ns;
    p.children_cuda_ns += child_cuda;
    if (!p.is_async) p.cuda_total_ns += child_cuda;
  }

  // Table flags: the trace's own metadata when it has it, else what the data shows.
  auto flag = [&](std::string_view key, bool fallback) {
    const std::string* v = trace.FindMetadata(key);
    if (v == nullptr) return fallback;
    return *v != "0" && *v != "false" && *v != "\"0\"" && *v != "\"false\"";
  };
  bool any_flops = false;
  for (const FunctionEvent& e : events) any_flops |= e.flops > 0;
  fe.profile_memory = flag("profile_memory", !memory.empty());
  fe.with_flops = flag("with_flops", any_flops);
  return result;
}

}  // namespace profsh
