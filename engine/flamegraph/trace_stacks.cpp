#include "engine/flamegraph/trace_stacks.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <unordered_map>
#include <vector>

#include "engine/analysis/cpu_samples.h"
#include "engine/load/trace_loader.h"
#include "engine/util/hash.h"
#include "engine/util/human_text.h"

namespace profsh {

namespace {

// The value an event contributes under a metric; 0 leaves it out.
Result<double (*)(const FunctionEvents&, size_t)> MetricFunction(const std::string& metric) {
  if (metric == "self_cpu_time_total") {
    return +[](const FunctionEvents& f, size_t i) {
      return static_cast<double>(f.self_cpu_ns(i)) / 1000.0;
    };
  }
  if (metric == "self_cuda_time_total" || metric == "self_device_time_total") {
    return +[](const FunctionEvents& f, size_t i) {
      return f.device(i) == DeviceType::kCpu ? static_cast<double>(f.self_cuda_ns(i)) / 1000.0
                                             : 0.0;
    };
  }
  if (metric == "self_cpu_memory_usage") {
    return +[](const FunctionEvents& f, size_t i) {
      return std::max<double>(0, static_cast<double>(f.self_cpu_memory(i)));
    };
  }
  if (metric == "count") {
    return +[](const FunctionEvents& f, size_t i) {
      return f.device(i) == DeviceType::kCpu ? 1.0 : 0.0;
    };
  }
  return Error{
      "unknown flamegraph metric '" + metric +
      "' (metrics: self_cpu_time_total, self_cuda_time_total, self_cpu_memory_usage, count)"};
}

std::string Sanitize(std::string_view frame) {
  // Frames cannot contain the separators of the folded format.
  std::string out(frame);
  for (char& c : out) {
    if (c == ';' || c == '\n' || c == '\r') c = '_';
  }
  return out;
}

// Python frames as torch's export_stacks writes them (spaces too become '_'), so that a
// trace's flamegraph and one drawn from its export_stacks file have the same frames.
std::string TorchFrame(std::string_view frame) {
  std::string out(frame);
  for (char& c : out) {
    if (c == ' ' || c == ';' || c == '\t' || c == '\n' || c == '\r') c = '_';
  }
  return out;
}

std::string Count(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

std::string ThreadFrame(const Trace& trace, uint32_t track, ThreadFrames form) {
  const Track& t = trace.tracks[track];
  uint32_t name = trace.thread(track).name;
  if (form == ThreadFrames::kNameAndPid) {
    std::string label =
        name != 0 ? std::string(trace.str(name)) : "thread " + trace.FormatIdent(t.tid);
    return label + " [pid " + trace.FormatIdent(t.pid) + "]";
  }
  // What stays the same from one run to the next: the thread's name and its process's labels
  // (a rank). An unnamed thread is only "thread": its tid would differ.
  std::string label = name != 0 ? std::string(trace.str(name)) : "thread";
  for (const ProcessInfo& p : trace.processes()) {
    if (p.pid == t.pid && p.labels != 0)
      return label + " [" + std::string(trace.str(p.labels)) + "]";
  }
  return label;
}

// No positive value anywhere is not an error here: the caller says which metric was empty.
Result<FoldedStacks> ParseOrEmpty(const std::string& text, const std::string& name) {
  if (text.empty()) return FoldedStacks(name);
  return FoldedStacks::Parse(text, name);
}

}  // namespace

std::string MetricUnit(const std::string& metric) {
  if (metric.find("time") != std::string::npos) return "us";
  if (metric.find("memory") != std::string::npos) return "bytes";
  if (metric == "samples") return "samples";
  return "calls";
}

namespace {

// One count per sample: [thread;] [open ranges, outermost first;] native frames, root first.
Result<FoldedStacks> SampleStacks(const Trace& trace, const TraceStackOptions& options) {
  const CpuSamples samples = CollectCpuSamples(trace);
  if (samples.samples.empty()) {
    return Error{trace.source_path +
                 ": the trace has no CPU samples (record with the cpu activity: "
                 "--activities ...,cpu or activities={..., \"cpu\"})"};
  }
  const bool by_thread = options.threads > 0;
  std::unordered_map<std::string, double> per_stack;
  std::string line;
  for (const CpuSample& s : samples.samples) {
    const std::string_view path = samples.strings.Get(s.range_path);
    if (!options.range.empty() && !RangePathHas(path, options.range)) continue;
    line.clear();
    if (by_thread) line += Sanitize(ThreadFrame(trace, s.track, options.thread_frames)) + ";";
    if (options.under_ranges && !path.empty()) line += std::string(path) + ";";
    line += samples.strings.Get(s.stack);
    per_stack[line] += s.weight;
  }
  std::string text;
  for (const auto& [stack, count] : per_stack) text += stack + " " + Count(count) + "\n";
  return ParseOrEmpty(text, trace.source_path + " (CPU samples)");
}

// The Python stacks: each event under its own stack, else under the stack of the innermost
// event around it that has one (a runtime call or a kernel launch ran inside that operator, in
// those frames). torch's export_stacks leaves the others out and truncates every event to whole
// units, so its graph falls short of the operators' total (a training loop lost a fifth: its
// backward pass). Here values are summed exactly, backward code that no forward stack reached
// goes under [backward] and anything else under [no Python stack], each with the operator's name,
// so the graph adds up to the metric's total and shows what had no stack.
Result<FoldedStacks> PythonStacks(const Trace& trace, const FunctionEvents& f,
                                  double (*value_of)(const FunctionEvents&, size_t),
                                  StackCoverage* coverage) {
  const size_t n = f.size();
  static constexpr std::string_view kWrapper = "autograd::engine::evaluate_function: ";
  std::vector<int8_t> wrapper_name(f.strings.size(), -1);  // per name id: 1 a backward wrapper
  auto is_wrapper = [&](uint32_t name) {
    if (wrapper_name[name] < 0) wrapper_name[name] = f.strings.Get(name).starts_with(kWrapper);
    return wrapper_name[name] == 1;
  };
  // Per event: the stack it is drawn under (its own or inherited), and whether it is backward
  // code (inside an evaluate_function wrapper). Resolved once per event, walking up to the first
  // event already resolved.
  constexpr uint32_t kUnresolved = UINT32_MAX;
  std::vector<uint32_t> stack_of(n, kUnresolved);
  std::vector<uint8_t> in_backward(n, 0);
  std::vector<uint32_t> chain;
  for (size_t i = 0; i < n; ++i) {
    if (stack_of[i] != kUnresolved) continue;
    chain.clear();
    int64_t e = static_cast<int64_t>(i);
    while (e >= 0 && stack_of[e] == kUnresolved) {
      chain.push_back(static_cast<uint32_t>(e));
      e = f.parent(e);
    }
    uint32_t stack = e >= 0 ? stack_of[e] : 0;
    uint8_t backward = e >= 0 ? in_backward[e] : 0;
    for (size_t k = chain.size(); k-- > 0;) {
      const uint32_t ev = chain[k];
      if (f.stack(ev) != 0) stack = f.stack(ev);
      backward = backward || is_wrapper(f.name(ev));
      stack_of[ev] = stack;
      in_backward[ev] = backward;
    }
  }
  StackCoverage cover;
  std::unordered_map<uint32_t, double> per_stack;
  std::unordered_map<uint32_t, double> backward_by_name, unstacked_by_name;
  for (size_t i = 0; i < n; ++i) {
    if (f.removed(i)) continue;
    // A negative self time (a child sticking out of its parent by a rounded microsecond) is
    // summed too, as the operators' total sums it; a stack whose sum is not positive is left out.
    const double v = value_of(f, i);
    if (v == 0 || std::isnan(v)) continue;
    cover.total += v;
    if (f.stack(i) != 0) {
      per_stack[f.stack(i)] += v;
    } else if (stack_of[i] != 0) {
      per_stack[stack_of[i]] += v;
      ++cover.inherited_events;
      cover.inherited += v;
    } else if (in_backward[i]) {
      backward_by_name[f.name(i)] += v;
      ++cover.backward_events;
      cover.backward += v;
    } else {
      unstacked_by_name[f.name(i)] += v;
      ++cover.unstacked_events;
      cover.unstacked += v;
    }
  }
  std::string text;
  for (const auto& [stack, value] : per_stack) {
    if (!(value > 0)) continue;
    const auto& frames = f.stacks.Get(stack);
    for (size_t k = frames.size(); k-- > 0;) {
      text += TorchFrame(f.strings.Get(frames[k]));
      text += k == 0 ? ' ' : ';';
    }
    text += Count(value) + "\n";
  }
  for (const auto& [root, by_name] : {std::pair{kBackwardFrame, &backward_by_name},
                                      std::pair{kNoStackFrame, &unstacked_by_name}}) {
    for (const auto& [name, value] : *by_name) {
      if (!(value > 0)) continue;
      text += std::string(root) + ";" + Sanitize(f.strings.Get(name)) + " " + Count(value) + "\n";
    }
  }
  if (coverage != nullptr) *coverage = cover;
  return ParseOrEmpty(text, trace.source_path + " (Python stacks)");
}

}  // namespace

Result<FoldedStacks> TraceStacks(const Trace& trace, const FunctionEvents& f,
                                 const TraceStackOptions& options, StackCoverage* coverage) {
  if (options.source == StackSource::kSamples) return SampleStacks(trace, options);
  auto metric = MetricFunction(options.metric);
  if (!metric.ok()) return metric.error();
  auto value_of = metric.value();
  const size_t n = f.size();
  bool python = options.source == StackSource::kPython;
  if (options.source != StackSource::kOperators) {
    bool any_stack = false;
    for (size_t i = 0; i < n && !any_stack; ++i) any_stack = !f.removed(i) && f.stack(i) != 0;
    if (python && !any_stack) {
      return Error{trace.source_path +
                   ": the trace has no Python stacks (record with with_stack=true, or "
                   "--with-stack); stacks=\"operators\" (--stacks operators) draws the nesting "
                   "of its operators"};
    }
    python = any_stack;
  }
  if (python) return PythonStacks(trace, f, value_of, coverage);

  std::string text;
  // The nesting of operators: a trie of (parent path, name) filled from each event's ancestors.
  bool by_thread = options.threads > 0;
  if (options.threads < 0) {
    uint32_t first = UINT32_MAX;
    for (size_t i = 0; i < n && !by_thread; ++i) {
      if (f.removed(i) || f.device(i) != DeviceType::kCpu) continue;
      if (first == UINT32_MAX) first = f.track(i);
      by_thread = f.track(i) != first;
    }
  }
  struct PathNode {
    uint32_t parent;  // path id, UINT32_MAX for a root
    uint32_t name;    // FunctionEvents string id, or track + 2^31 for a thread frame
    double value;
  };
  std::vector<PathNode> nodes;
  std::unordered_map<uint64_t, uint32_t> child;
  auto path = [&](uint32_t parent, uint32_t name) {
    uint64_t key = (static_cast<uint64_t>(parent) << 32) | name;
    auto [it, inserted] = child.try_emplace(key, static_cast<uint32_t>(nodes.size()));
    if (inserted) nodes.push_back({parent, name, 0});
    return it->second;
  };
  std::vector<uint32_t> path_of(n, UINT32_MAX);
  std::vector<uint32_t> pending;
  for (size_t i = 0; i < n; ++i) {
    if (f.removed(i) || f.device(i) != DeviceType::kCpu || path_of[i] != UINT32_MAX) continue;
    // Walk up to the first ancestor whose path is known, then come back down.
    pending.clear();
    int64_t e = static_cast<int64_t>(i);
    while (e >= 0 && path_of[e] == UINT32_MAX) {
      pending.push_back(static_cast<uint32_t>(e));
      e = f.parent(e);
    }
    uint32_t p = e >= 0 ? path_of[e] : UINT32_MAX;
    for (size_t k = pending.size(); k-- > 0;) {
      uint32_t ev = pending[k];
      if (p == UINT32_MAX && by_thread) p = path(UINT32_MAX, f.track(ev) | 0x80000000u);
      p = path(p, f.name(ev));
      path_of[ev] = p;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (path_of[i] != UINT32_MAX) nodes[path_of[i]].value += value_of(f, i);
  }
  std::vector<std::string_view> frames;
  std::vector<std::string> thread_names;
  for (uint32_t id = 0; id < nodes.size(); ++id) {
    if (!(nodes[id].value > 0)) continue;
    std::string line;
    std::vector<uint32_t> chain;
    for (uint32_t p = id; p != UINT32_MAX; p = nodes[p].parent) chain.push_back(p);
    for (size_t k = chain.size(); k-- > 0;) {
      uint32_t name = nodes[chain[k]].name;
      line += (name & 0x80000000u)
                  ? Sanitize(ThreadFrame(trace, name & 0x7fffffffu, options.thread_frames))
                  : Sanitize(f.strings.Get(name));
      line += k == 0 ? ' ' : ';';
    }
    text += line;
    text += Count(nodes[id].value) + "\n";
  }
  return ParseOrEmpty(text, trace.source_path + " (operators)");
}

bool IsTraceFile(const std::string& path) {
  auto input = OpenInput(path);
  return input.ok() && TraceReaders().Find(input.value()->Head()) != nullptr;
}

std::string DescribeStackCoverage(const StackCoverage& c, const std::string& unit) {
  auto part = [&](size_t events, double value, const char* what, std::string_view frame) {
    const double share = c.total > 0 ? 100.0 * value / c.total : 0;
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.1f", share);
    return Plural(events, "event", "events") + " " + what + " (" + GroupedNumber(value, 0) + " " +
           unit + ", " + pct + " %) under " + std::string(frame);
  };
  std::string out;
  if (c.backward_events > 0)
    out = part(c.backward_events, c.backward, "of backward code that no forward stack reached",
               kBackwardFrame);
  if (c.unstacked_events > 0) {
    out += (out.empty() ? "" : "; ") +
           part(c.unstacked_events, c.unstacked, "without a Python stack", kNoStackFrame);
  }
  return out;
}

Result<FoldedStacks> StacksFromFile(const std::string& path, const TraceStackOptions& options,
                                    StackCoverage* coverage) {
  if (!IsTraceFile(path)) return FoldedStacks::Load(path);
  auto trace = LoadTrace(path);
  if (!trace.ok()) return trace.error();
  auto events = BuildFunctionEvents(*trace.value());
  auto stacks = TraceStacks(*trace.value(), *events, options, coverage);
  if (stacks.ok() && stacks.value().size() == 0) {
    return Error{path + ": no event has a positive " + options.metric};
  }
  return stacks;
}

}  // namespace profsh
