#include "engine/analysis/compile_analysis.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

#include "engine/analysis/gpu_intervals.h"
#include "engine/analysis/model/compile_roles.h"
#include "engine/analysis/model/event_model.h"
#include "engine/analysis/model/forward_backward_flows.h"

namespace profsh {
namespace {

using Role = CompileRole;

bool IsCompiledCode(Role r) {
  return r == Role::kForward || r == Role::kBackward || r == Role::kCppKernel ||
         r == Role::kTritonLaunch;
}

double Micros(int64_t ns) {
  return static_cast<double>(ns) / 1000.0;
}

struct Step {
  int64_t number, ts, end;
};

// The model's ProfilerStep#N ranges (host ones: a step's device-side span is not a step), by
// start.
std::vector<Step> StepsOf(const Trace& trace, const EventModel& model) {
  std::vector<Step> steps;
  for (const StepRange& s : model.ids().steps)
    steps.push_back(Step{s.number, trace.events.ts(s.event), trace.events.end(s.event)});
  std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.ts < b.ts; });
  return steps;
}

// The step whose range holds `ts`; -1 outside every step.
int64_t StepAt(const std::vector<Step>& steps, int64_t ts) {
  auto it = std::upper_bound(steps.begin(), steps.end(), ts,
                             [](int64_t t, const Step& s) { return t < s.ts; });
  if (it == steps.begin()) return -1;
  --it;
  return ts < it->end ? it->number : -1;
}

struct DeviceWork {
  int64_t ts, end, launch_ts, launch_end;  // launch_*: the runtime call, -1 when unknown
  bool graph_replay;
};

// One call of a compiled region (its forward), or one CompiledFunctionBackward.
struct Instance {
  uint32_t event;        // index in FunctionEvents
  int32_t region_event;  // the region it belongs to (itself for a forward call); -1 unknown
  bool backward;
  int64_t step;
  int64_t ts, end;
  int64_t kernels = 0;
  std::vector<Interval> compile_work;  // the compile spans inside it, nested ones included
  std::vector<DeviceWork> work;
};

struct WorkStats {
  int64_t busy = 0, idle = 0, host_wait = 0;
  int64_t launch_delay_sum = 0, launch_delays = 0, short_kernels = 0, graph_replays = 0;
};

// Busy, idle and host wait of one instance's device work: idle inside the span from its first
// start to its last end; a gap is a host wait when the launch of the work after it began only
// after the device had run out of work.
void AddWorkStats(std::vector<DeviceWork>& work, WorkStats* s) {
  if (work.empty()) return;
  std::sort(work.begin(), work.end(),
            [](const DeviceWork& a, const DeviceWork& b) { return a.ts < b.ts; });
  int64_t covered_end = work.front().ts;
  for (const DeviceWork& w : work) {
    if (w.ts > covered_end) {
      const int64_t gap = w.ts - covered_end;
      s->idle += gap;
      if (w.launch_ts >= 0 && w.launch_ts >= covered_end) s->host_wait += gap;
    }
    if (w.end > covered_end) {
      s->busy += w.end - std::max(w.ts, covered_end);
      covered_end = w.end;
    }
    if (w.launch_ts >= 0) {
      s->launch_delay_sum += w.ts - w.launch_ts;
      ++s->launch_delays;
      if (w.end - w.ts < w.launch_end - w.launch_ts) ++s->short_kernels;
    }
    if (w.graph_replay) ++s->graph_replays;
  }
}

// The launch-overhead verdict of a region: CPU-bound when the device waited for launches for
// most of its idle time, or when most kernels ran shorter than their launch call and the device
// was busy for less time than the host spent running the region.
std::string Verdict(int64_t device_items, const WorkStats& s, int64_t host_run_ns) {
  if (device_items == 0) return "no device work";
  if (s.graph_replays * 2 >= device_items) return "CUDA graphs in use";
  const bool waits_for_host = s.idle > s.busy && s.host_wait * 2 >= s.idle;
  const bool short_launches =
      s.launch_delays > 0 && s.short_kernels * 2 >= s.launch_delays && s.busy < host_run_ns;
  if (waits_for_host || short_launches)
    return "CPU-bound: consider CUDA graphs (mode='reduce-overhead')";
  if (s.idle > s.busy) return "GPU idle, not waiting for launches";
  return "GPU-bound";
}

class Analyzer {
 public:
  Analyzer(const Trace& trace, const FunctionEvents& f)
      : trace_(trace), f_(f), model_(ModelOf(trace)) {}

  CompileAnalysis Run() {
    Classify();
    steps_ = StepsOf(trace_, model_);
    CollectInstances();
    AttachDeviceWork();
    CompileAnalysis out;
    out.regions = RegionRows();
    out.recompiles = RecompileRows();
    out.islands = IslandRows();
    out.steps = StepRows();
    out.provenance = ProvenanceRows();
    return out;
  }

 private:
  bool Live(size_t i) const {
    return !f_.removed(i) && f_.device(i) == DeviceType::kCpu && f_.kind(i) != EventKind::kMemory &&
           f_.kind(i) != EventKind::kRuntime;
  }
  std::string_view Name(size_t i) const { return f_.strings.Get(f_.name(i)); }
  int64_t SequenceOf(size_t i) const {
    auto t = f_.trace_event(i);
    return t ? model_.args().Int(*t, KnownArg::kSequenceNumber).value_or(-1) : -1;
  }

  // Every event after its parent. FunctionEvents keeps the trace's order, which is not that:
  // profsh's own recordings write an operator when it ends, after everything inside it.
  std::vector<uint32_t> ParentsFirst() const {
    const size_t n = f_.size();
    std::vector<uint32_t> order, chain;
    order.reserve(n);
    std::vector<uint8_t> placed(n, 0);
    for (size_t i = 0; i < n; ++i) {
      chain.clear();
      for (int32_t a = static_cast<int32_t>(i); a >= 0 && !placed[a]; a = f_.parent(a))
        chain.push_back(static_cast<uint32_t>(a));
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        placed[*it] = 1;
        order.push_back(*it);
      }
    }
    return order;
  }

  void Classify() {
    const size_t n = f_.size();
    role_.assign(n, Role::kNone);
    region_depth_.assign(n, 0);
    enclosing_region_.assign(n, -1);
    in_compiled_.assign(n, 0);
    in_compile_work_.assign(n, 0);
    in_guard_.assign(n, 0);
    contains_compiled_.assign(n, 0);
    compiling_track_.assign(trace_.tracks.size(), 0);
    const std::vector<CompileRole> of_template = CompileRolesOfTemplates(trace_);
    const auto& template_column = trace_.events.template_column();
    for (size_t i = 0; i < n; ++i) {
      if (!Live(i)) continue;
      const std::optional<uint32_t> t = f_.trace_event(i);
      role_[i] = t ? of_template[template_column[*t]] : CompileRoleOfName(Name(i));
    }
    for (uint32_t i : ParentsFirst()) {
      if (!Live(i)) continue;
      const int32_t p = f_.parent(i);
      if (p >= 0) {
        region_depth_[i] = region_depth_[p] + (role_[p] == Role::kRegion ? 1 : 0);
        enclosing_region_[i] = role_[p] == Role::kRegion ? p : enclosing_region_[p];
        in_compiled_[i] = in_compiled_[p] || IsCompiledCode(role_[p]);
        in_compile_work_[i] = in_compile_work_[p] || role_[p] == Role::kCompileWork;
        in_guard_[i] = in_guard_[p] || role_[p] == Role::kGuard;
      }
      if (role_[i] != Role::kNone) compiling_track_[f_.track(i)] = 1;
      if (role_[i] == Role::kRegion || IsCompiledCode(role_[i]) || role_[i] == Role::kCompileWork) {
        for (int32_t a = f_.parent(i); a >= 0 && !contains_compiled_[a]; a = f_.parent(a))
          contains_compiled_[a] = 1;
      }
    }
  }

  // Where a trace places an event: its track and start.
  using Place = TrackPlace;

  // The model's fwdbwd flows: the place of each flow's finish -> its start's (the latest flow
  // to finish there).
  std::map<Place, Place> ForwardBackwardLinks() const {
    std::map<Place, Place> links;
    for (const ForwardBackwardFlow& f : ForwardBackwardFlows(trace_)) links[f.backward] = f.forward;
    return links;
  }

  // The CompiledFunction a CompiledFunctionBackward runs the backward of: the one its fwdbwd
  // flow starts at; without a flow, the one with its sequence number that started last before
  // it (numbers repeat across threads, and a backward follows its forward). -1: none.
  int32_t ForwardOf(
      size_t backward, const std::map<Place, Place>& flows,
      const std::map<Place, uint32_t>& forward_at,
      const std::unordered_map<int64_t, std::vector<uint32_t>>& forward_by_seq) const {
    auto flow = flows.find(Place{f_.track(backward), f_.start_ns(backward)});
    if (flow != flows.end()) {
      auto fwd = forward_at.find(flow->second);
      if (fwd != forward_at.end()) return static_cast<int32_t>(fwd->second);
    }
    auto it = forward_by_seq.find(SequenceOf(backward));
    if (it == forward_by_seq.end()) return -1;
    int32_t best = -1;
    for (uint32_t fwd : it->second) {
      if (f_.start_ns(fwd) <= f_.start_ns(backward) &&
          (best < 0 || f_.start_ns(fwd) > f_.start_ns(best)))
        best = static_cast<int32_t>(fwd);
    }
    return best;
  }

  void CollectInstances() {
    std::unordered_map<int64_t, std::vector<uint32_t>> forward_by_seq;
    std::map<Place, uint32_t> forward_at;
    for (size_t i = 0; i < f_.size(); ++i) {
      if (role_[i] != Role::kForward) continue;
      forward_at[Place{f_.track(i), f_.start_ns(i)}] = static_cast<uint32_t>(i);
      int64_t seq = SequenceOf(i);
      if (seq >= 0) forward_by_seq[seq].push_back(static_cast<uint32_t>(i));
    }
    const std::map<Place, Place> flows = ForwardBackwardLinks();
    instance_of_.assign(f_.size(), -1);
    for (size_t i = 0; i < f_.size(); ++i) {
      if (role_[i] == Role::kRegion) {
        AddInstance(i, static_cast<int32_t>(i), false);
      } else if (role_[i] == Role::kBackward) {
        const int32_t fwd = ForwardOf(i, flows, forward_at, forward_by_seq);
        AddInstance(i, fwd >= 0 ? enclosing_region_[fwd] : -1, true);
      }
    }
    // Inductor's C++ kernels and compile work count for the innermost instance around them.
    for (size_t i = 0; i < f_.size(); ++i) {
      const bool compile = role_[i] == Role::kCompileWork;
      if (role_[i] != Role::kCppKernel && !compile) continue;
      int32_t in = InstanceAround(static_cast<int32_t>(i));
      if (in < 0) continue;
      if (compile) {
        instances_[in].compile_work.push_back(Interval{f_.start_ns(i), f_.end_ns(i)});
      } else {
        ++instances_[in].kernels;
      }
    }
  }

  void AddInstance(size_t event, int32_t region_event, bool backward) {
    Instance in;
    in.event = static_cast<uint32_t>(event);
    in.region_event = region_event;
    in.backward = backward;
    in.step = StepAt(steps_, f_.start_ns(event));
    in.ts = f_.start_ns(event);
    in.end = f_.end_ns(event);
    instance_of_[event] = static_cast<int32_t>(instances_.size());
    instances_.push_back(std::move(in));
  }

  int32_t InstanceAround(int32_t e) const {
    for (int32_t a = e; a >= 0; a = f_.parent(a)) {
      if (instance_of_[a] >= 0) return instance_of_[a];
    }
    return -1;
  }

  bool IsGraphLaunch(int32_t runtime) const {
    if (runtime < 0) return false;
    return Name(runtime).starts_with("cudaGraphLaunch") ||
           Name(runtime).starts_with("hipGraphLaunch");
  }

  // Device work reaches an instance through the operator view's launches: torch's rule (the
  // first op or runtime call offered for an id, the model's FirstCandidate), as the tables it
  // sits beside attach kernels to operators.
  void AttachDeviceWork() {
    for (const FunctionEvents::Launch& l : f_.launches) {
      int32_t op = l.op;
      if (op < 0 && l.runtime >= 0) op = f_.parent(l.runtime);
      const int32_t in = op >= 0 ? InstanceAround(op) : -1;
      if (in < 0) continue;
      DeviceWork w{f_.start_ns(l.device), f_.end_ns(l.device), -1, -1, IsGraphLaunch(l.runtime)};
      if (l.runtime >= 0) {
        w.launch_ts = f_.start_ns(l.runtime);
        w.launch_end = f_.end_ns(l.runtime);
      }
      ++instances_[in].kernels;
      instances_[in].work.push_back(w);
    }
  }

  std::string RegionName(int32_t region_event) const {
    return region_event >= 0 ? std::string(Name(region_event)) : std::string(kCompiledBackwardName);
  }

  AnalysisRows RegionRows() {
    AnalysisRows rows;
    rows.columns = {"region",   "pass",     "frame",           "recompile",         "step",
                    "calls",    "cpu_time", "compile_time",    "kernels",           "gpu_busy",
                    "gpu_idle", "depth",    "host_wait_share", "mean_launch_delay", "short_kernels",
                    "verdict"};
    struct Group {
      int32_t region_event;
      bool backward;
      int64_t step;
      int64_t calls = 0, cpu_ns = 0, compile_ns = 0, kernels = 0, device_items = 0, depth = 0;
      WorkStats work;
    };
    // Grouped by (step, region name, pass) in the order groups first appear.
    std::map<std::tuple<int64_t, std::string, bool>, size_t> index;
    std::vector<Group> groups;
    for (Instance& in : instances_) {
      auto key = std::make_tuple(in.step, RegionName(in.region_event), in.backward);
      auto [it, fresh] = index.emplace(key, groups.size());
      if (fresh) {
        Group g{in.region_event, in.backward, in.step, 0, 0, 0, 0, 0, 0, {}};
        g.depth = in.region_event >= 0 ? region_depth_[in.region_event] : 0;
        groups.push_back(g);
      }
      Group& g = groups[it->second];
      ++g.calls;
      g.cpu_ns += in.end - in.ts;
      g.compile_ns += UnionLength(MergeIntervals(std::move(in.compile_work)));
      g.kernels += in.kernels;
      g.device_items += static_cast<int64_t>(in.work.size());
      AddWorkStats(in.work, &g.work);
    }
    std::vector<size_t> order(groups.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return groups[a].step < groups[b].step; });
    for (size_t gi : order) {
      const Group& g = groups[gi];
      int64_t frame = -1, recompile = -1;
      if (g.region_event >= 0) ParseCompiledRegion(Name(g.region_event), &frame, &recompile);
      const WorkStats& w = g.work;
      rows.rows.push_back({
          Cell::Text(RegionName(g.region_event)),
          Cell::Text(g.backward ? "backward" : "forward"),
          frame >= 0 ? Cell::Int(frame) : Cell::Empty(),
          recompile >= 0 ? Cell::Int(recompile) : Cell::Empty(),
          g.step >= 0 ? Cell::Int(g.step) : Cell::Empty(),
          Cell::Int(g.calls),
          Cell::Fixed(Micros(g.cpu_ns), 3),
          Cell::Fixed(Micros(g.compile_ns), 3),
          Cell::Int(g.kernels),
          Cell::Fixed(Micros(w.busy), 3),
          Cell::Fixed(Micros(w.idle), 3),
          Cell::Int(g.depth),
          w.idle > 0 ? Cell::Double(RoundDecimal(static_cast<double>(w.host_wait) / w.idle, 4))
                     : Cell::Empty(),
          w.launch_delays > 0
              ? Cell::Fixed(Micros(w.launch_delay_sum) / static_cast<double>(w.launch_delays), 3)
              : Cell::Empty(),
          Cell::Int(w.short_kernels),
          Cell::Text(Verdict(g.device_items, w, g.cpu_ns - g.compile_ns)),
      });
    }
    if (instances_.empty())
      rows.notes.push_back(
          "no compiled regions: the trace has no \"Torch-Compiled Region\" or "
          "CompiledFunction events (PyTorch 2.2 or later records them)");
    bool unmatched = std::any_of(instances_.begin(), instances_.end(), [](const Instance& in) {
      return in.backward && in.region_event < 0;
    });
    if (unmatched)
      rows.notes.push_back(
          "some CompiledFunctionBackward calls lead to no CompiledFunction in the "
          "trace (by fwdbwd flow or sequence number): their region is unknown");
    return rows;
  }

  // The latest top-level compile event on the track that ended by `ts`.
  int64_t CompileTimeBefore(uint32_t track, int64_t ts) const {
    int64_t best_end = INT64_MIN, dur = 0;
    for (uint32_t c : top_compile_events_) {
      if (f_.track(c) != track || f_.end_ns(c) > ts) continue;
      if (f_.end_ns(c) > best_end) {
        best_end = f_.end_ns(c);
        dur = f_.end_ns(c) - f_.start_ns(c);
      }
    }
    return dur;
  }

  AnalysisRows RecompileRows() {
    for (size_t i = 0; i < f_.size(); ++i) {
      if (role_[i] == Role::kCompileWork && !in_compile_work_[i])
        top_compile_events_.push_back(static_cast<uint32_t>(i));
    }
    AnalysisRows rows;
    rows.columns = {"frame", "recompile", "region", "step", "start", "compile_time"};
    std::map<std::pair<int64_t, int64_t>, bool> seen;
    for (const Instance& in : instances_) {
      if (in.backward) continue;
      int64_t frame, recompile;
      ParseCompiledRegion(Name(in.event), &frame, &recompile);
      if (recompile < 1 || !seen.emplace(std::make_pair(frame, recompile), true).second) continue;
      recompile_steps_.push_back(in.step);
      rows.rows.push_back({Cell::Int(frame), Cell::Int(recompile),
                           Cell::Text(std::string(Name(in.event))),
                           in.step >= 0 ? Cell::Int(in.step) : Cell::Empty(),
                           Cell::Fixed(Micros(in.ts - trace_.begin_ns()), 3),
                           Cell::Fixed(Micros(CompileTimeBefore(f_.track(in.event), in.ts)), 3)});
    }
    return rows;
  }

  bool IsEagerTop(size_t i) const {
    if (!Live(i) || role_[i] != Role::kNone || f_.kind(i) != EventKind::kCpuOp) return false;
    if (in_compiled_[i] || in_compile_work_[i] || in_guard_[i] || contains_compiled_[i])
      return false;
    if (!compiling_track_[f_.track(i)]) return false;
    // Outermost only: an eager op inside another eager op belongs to it.
    for (int32_t a = f_.parent(i); a >= 0; a = f_.parent(a)) {
      if (role_[a] == Role::kNone && f_.kind(a) == EventKind::kCpuOp && !contains_compiled_[a])
        return false;
    }
    return true;
  }

  std::string StackText(size_t i) const {
    std::string out;
    for (uint32_t frame : f_.stacks.Get(f_.stack(i))) {
      if (!out.empty()) out += ';';
      out += f_.strings.Get(frame);
    }
    return out;
  }

  AnalysisRows IslandRows() {
    AnalysisRows rows;
    rows.columns = {"step", "tid",      "start",   "duration", "op_time",
                    "ops",  "first_op", "last_op", "region",   "stack"};
    // Starts of compiled code and compile work per track: an island ends where one begins.
    std::unordered_map<uint32_t, std::vector<int64_t>> boundaries;
    std::vector<uint32_t> tops;
    for (size_t i = 0; i < f_.size(); ++i) {
      if (!Live(i)) continue;
      if (role_[i] != Role::kNone) boundaries[f_.track(i)].push_back(f_.start_ns(i));
      if (IsEagerTop(i)) tops.push_back(static_cast<uint32_t>(i));
    }
    for (auto& [track, starts] : boundaries) std::sort(starts.begin(), starts.end());
    std::stable_sort(tops.begin(), tops.end(), [&](uint32_t a, uint32_t b) {
      if (f_.track(a) != f_.track(b)) return f_.track(a) < f_.track(b);
      return f_.start_ns(a) < f_.start_ns(b);
    });
    struct Island {
      std::vector<uint32_t> ops;
      int64_t step;
    };
    std::vector<Island> islands;
    for (uint32_t op : tops) {
      const int64_t step = StepAt(steps_, f_.start_ns(op));
      bool joins = false;
      if (!islands.empty()) {
        const Island& last = islands.back();
        const uint32_t prev = last.ops.back();
        if (f_.track(prev) == f_.track(op) && last.step == step &&
            enclosing_region_[prev] == enclosing_region_[op]) {
          const std::vector<int64_t>& b = boundaries[f_.track(op)];
          auto from = std::lower_bound(b.begin(), b.end(), f_.end_ns(prev));
          joins = from == b.end() || *from >= f_.start_ns(op);
        }
      }
      if (joins) {
        islands.back().ops.push_back(op);
      } else {
        islands.push_back(Island{{op}, step});
      }
    }
    std::stable_sort(islands.begin(), islands.end(), [&](const Island& a, const Island& b) {
      return f_.start_ns(a.ops.front()) < f_.start_ns(b.ops.front());
    });
    for (const Island& island : islands) {
      const uint32_t first = island.ops.front(), last = island.ops.back();
      int64_t op_ns = 0, end = f_.end_ns(first);
      std::string stack;
      for (uint32_t op : island.ops) {
        op_ns += f_.end_ns(op) - f_.start_ns(op);
        end = std::max(end, f_.end_ns(op));
        if (stack.empty()) stack = StackText(op);
      }
      const int32_t region = enclosing_region_[first];
      island_time_[island.step] += op_ns;
      ++island_count_[island.step];
      rows.rows.push_back(
          {island.step >= 0 ? Cell::Int(island.step) : Cell::Empty(),
           Cell::Text(trace_.FormatIdent(trace_.tracks[f_.track(first)].tid)),
           Cell::Fixed(Micros(f_.start_ns(first) - trace_.begin_ns()), 3),
           Cell::Fixed(Micros(end - f_.start_ns(first)), 3), Cell::Fixed(Micros(op_ns), 3),
           Cell::Int(static_cast<int64_t>(island.ops.size())), Cell::Text(std::string(Name(first))),
           Cell::Text(std::string(Name(last))),
           Cell::Text(region >= 0 ? std::string(Name(region)) : std::string()),
           Cell::Text(std::move(stack))});
    }
    return rows;
  }

  // Compile time counts each instant once: nested compile spans, and spans of threads that
  // compile at the same time, are one stretch of the union of every compile span in the trace.
  std::vector<Interval> CompileSpans() const {
    std::vector<Interval> spans;
    for (size_t i = 0; i < f_.size(); ++i) {
      if (role_[i] == Role::kCompileWork) spans.push_back(Interval{f_.start_ns(i), f_.end_ns(i)});
    }
    return MergeIntervals(std::move(spans));
  }

  AnalysisRows StepRows() {
    AnalysisRows rows;
    rows.columns = {"step",    "step_time",    "compile_time", "run_time",      "guard_time",
                    "regions", "graph_breaks", "recompiles",   "eager_islands", "eager_time"};
    struct PerStep {
      std::vector<Interval> ranges;  // ProfilerStep ranges of this number (one, normally)
      int64_t guard_ns = 0, regions = 0, breaks = 0, recompiles = 0;
    };
    std::map<int64_t, PerStep> per;  // step -1: outside every step
    std::vector<Interval> all_steps;
    for (const Step& s : steps_) {
      per[s.number].ranges.push_back(Interval{s.ts, s.end});
      all_steps.push_back(Interval{s.ts, s.end});
    }
    all_steps = MergeIntervals(std::move(all_steps));
    const std::vector<Interval> compile = CompileSpans();
    for (size_t i = 0; i < f_.size(); ++i) {
      if (role_[i] == Role::kGuard && !in_guard_[i])
        per[StepAt(steps_, f_.start_ns(i))].guard_ns += f_.end_ns(i) - f_.start_ns(i);
    }
    for (const Instance& in : instances_) {
      if (in.backward) continue;
      PerStep& p = per[in.step];
      ++p.regions;
      if (region_depth_[in.event] > 0) ++p.breaks;
    }
    for (int64_t step : recompile_steps_) ++per[step].recompiles;
    for (const auto& [step, count] : island_count_) per[step];
    if (instances_.empty() && compile.empty()) return rows;
    per[-1];  // the time outside the steps has a row when anything happens there, compile alone too
    for (auto& [step, p] : per) {
      const bool outside = step < 0;
      // Outside the steps: the trace's span less the steps', so that the rows add up to the span.
      int64_t step_ns, compile_ns;
      if (outside) {
        step_ns = trace_.end_ns() - trace_.begin_ns() - UnionLength(all_steps);
        compile_ns = UnionLength(compile) - OverlapLength(compile, all_steps);
      } else {
        const std::vector<Interval> ranges = MergeIntervals(std::move(p.ranges));
        step_ns = UnionLength(ranges);
        compile_ns = OverlapLength(compile, ranges);
      }
      if (outside && p.regions == 0 && compile_ns == 0 && island_count_.count(step) == 0) continue;
      rows.rows.push_back(
          {outside ? Cell::Empty() : Cell::Int(step), Cell::Fixed(Micros(step_ns), 3),
           Cell::Fixed(Micros(compile_ns), 3), Cell::Fixed(Micros(step_ns - compile_ns), 3),
           Cell::Fixed(Micros(p.guard_ns), 3), Cell::Int(p.regions), Cell::Int(p.breaks),
           Cell::Int(p.recompiles),
           Cell::Int(island_count_.count(step) ? island_count_.at(step) : 0),
           Cell::Fixed(Micros(island_time_.count(step) ? island_time_.at(step) : 0), 3)});
    }
    return rows;
  }

  AnalysisRows ProvenanceRows() {
    AnalysisRows rows;
    rows.columns = {"device", "provenance", "kernels", "time", "percentage"};
    struct Sum {
      int64_t count = 0, ns = 0;
    };
    std::map<std::string, Sum> gpu, cpu;
    int64_t gpu_total = 0, cpu_total = 0;
    for (const FunctionEvents::Launch& l : f_.launches) {
      const size_t d = l.device;
      std::string p;
      if (f_.kind(d) == EventKind::kCopy) {
        p = "memcpy";
      } else if (f_.kind(d) == EventKind::kSet) {
        p = "memset";
      } else if (IsGraphLaunch(l.runtime)) {
        p = "CUDA graph replay";
      } else {
        p = KernelProvenanceOfName(Name(d));
        if (p == "ATen") {
          int32_t op = l.op;
          if (op < 0 && l.runtime >= 0) op = f_.parent(l.runtime);
          p = op >= 0 && InstanceAround(op) >= 0 ? "ATen fallback in compiled code" : "ATen eager";
        }
      }
      Sum& s = gpu[p];
      ++s.count;
      s.ns += f_.end_ns(d) - f_.start_ns(d);
      gpu_total += f_.end_ns(d) - f_.start_ns(d);
    }
    // On the CPU, compiled code is Inductor's C++ kernels and the ATen calls it makes itself
    // (extern kernels such as aten::mm): the operators directly inside CompiledFunction(Backward).
    for (size_t i = 0; i < f_.size(); ++i) {
      if (!Live(i)) continue;
      const int32_t p = f_.parent(i);
      const bool kernel = role_[i] == Role::kCppKernel;
      const bool extern_call = p >= 0 &&
                               (role_[p] == Role::kForward || role_[p] == Role::kBackward) &&
                               role_[i] == Role::kNone && f_.kind(i) == EventKind::kCpuOp;
      if (!kernel && !extern_call) continue;
      Sum& s = cpu[kernel ? "inductor C++ kernel" : "ATen fallback in compiled code"];
      ++s.count;
      s.ns += f_.end_ns(i) - f_.start_ns(i);
      cpu_total += f_.end_ns(i) - f_.start_ns(i);
    }
    auto emit = [&](const char* device, const std::map<std::string, Sum>& sums, int64_t total) {
      std::vector<std::pair<std::string, Sum>> sorted(sums.begin(), sums.end());
      std::stable_sort(sorted.begin(), sorted.end(),
                       [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
      for (const auto& [name, s] : sorted) {
        rows.rows.push_back(
            {Cell::Text(device), Cell::Text(name), Cell::Int(s.count), Cell::Fixed(Micros(s.ns), 3),
             Cell::Double(total > 0 ? RoundDecimal(100.0 * static_cast<double>(s.ns) / total, 2)
                                    : 0.0)});
      }
    };
    emit("gpu", gpu, gpu_total);
    emit("cpu", cpu, cpu_total);
    if (rows.rows.empty())
      rows.notes.push_back(
          "no kernels: the trace has no device work and no Inductor C++ kernels "
          "(recorded with torch._inductor.config.cpp.enable_kernel_profile)");
    return rows;
  }

  const Trace& trace_;
  const FunctionEvents& f_;
  const EventModel& model_;
  std::vector<Role> role_;
  std::vector<int32_t> region_depth_, enclosing_region_, instance_of_;
  std::vector<uint8_t> in_compiled_, in_compile_work_, in_guard_, contains_compiled_;
  std::vector<uint8_t> compiling_track_;  // by trace track: the thread runs compiled code
  std::vector<Step> steps_;
  std::vector<Instance> instances_;
  std::vector<uint32_t> top_compile_events_;
  std::vector<int64_t> recompile_steps_;
  std::map<int64_t, int64_t> island_time_, island_count_;
};

bool Contains(std::string_view s, std::string_view what) {
  return s.find(what) != std::string_view::npos;
}

}  // namespace

const char* KernelProvenanceOfName(std::string_view n) {
  if (n.starts_with("triton_poi_")) return "inductor pointwise";
  if (n.starts_with("triton_red_")) return "inductor reduction";
  if (n.starts_with("triton_per_")) return "inductor persistent reduction";
  if (n.starts_with("triton_tem_")) return "inductor template";
  if (n.starts_with("triton_")) return "triton";
  if (Contains(n, "nccl")) return "NCCL";
  if (Contains(n, "flash") || Contains(n, "fmha")) return "flash attention";
  if (Contains(n, "cudnn") || Contains(n, "_fprop") || Contains(n, "_dgrad") ||
      Contains(n, "_wgrad") || Contains(n, "implicit_convolve"))
    return "cuDNN";
  if (Contains(n, "cutlass")) return "CUTLASS";
  if (Contains(n, "gemm") || Contains(n, "gemv") || Contains(n, "cublas") ||
      n.starts_with("ampere_") || n.starts_with("volta_") || n.starts_with("turing_") ||
      n.starts_with("sm90_xmma") || n.starts_with("sm80_xmma"))
    return "cuBLAS";
  return "ATen";
}

CompileAnalysis AnalyzeCompile(const Trace& trace, const FunctionEvents& events) {
  return Analyzer(trace, events).Run();
}

}  // namespace profsh
