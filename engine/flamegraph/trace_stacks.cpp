#include "engine/flamegraph/trace_stacks.h"

#include <charconv>
#include <cmath>
#include <unordered_map>
#include <vector>

#include "engine/analysis/cpu_samples.h"
#include "engine/load/trace_loader.h"
#include "engine/util/hash.h"

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

}  // namespace

Result<FoldedStacks> TraceStacks(const Trace& trace, const FunctionEvents& f,
                                 const TraceStackOptions& options) {
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
  std::string text;
  if (python) {
    // Like torch's export_stacks (whole units per event), but merged per stack.
    std::unordered_map<uint32_t, double> per_stack;
    for (size_t i = 0; i < n; ++i) {
      if (f.removed(i) || f.stack(i) == 0) continue;
      double v = std::trunc(value_of(f, i));
      if (v > 0) per_stack[f.stack(i)] += v;
    }
    for (const auto& [stack, value] : per_stack) {
      const auto& frames = f.stacks.Get(stack);
      for (size_t k = frames.size(); k-- > 0;) {
        text += TorchFrame(f.strings.Get(frames[k]));
        text += k == 0 ? ' ' : ';';
      }
      text += Count(value) + "\n";
    }
    return ParseOrEmpty(text, trace.source_path + " (Python stacks)");
  }

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

Result<FoldedStacks> StacksFromFile(const std::string& path, const TraceStackOptions& options) {
  if (!IsTraceFile(path)) return FoldedStacks::Load(path);
  auto trace = LoadTrace(path);
  if (!trace.ok()) return trace.error();
  auto events = BuildFunctionEvents(*trace.value());
  auto stacks = TraceStacks(*trace.value(), *events, options);
  if (stacks.ok() && stacks.value().size() == 0) {
    return Error{path + ": no event has a positive " + options.metric};
  }
  return stacks;
}

}  // namespace profsh
