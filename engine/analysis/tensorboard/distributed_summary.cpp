#include "engine/analysis/tensorboard/distributed_summary.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "engine/analysis/tensorboard/host_tree.h"

namespace profsh::tensorboard {
namespace {

// communication.py's element sizes; other types count 0 bytes, as there.
int64_t ElementBytes(std::string_view type) {
  if (type == "long int") return 8;
  if (type == "float" || type == "int") return 4;
  if (type == "c10::Half" || type == "c10::BFloat16") return 2;
  if (type == "unsigned char") return 1;
  return 0;
}

int64_t InputBytes(const TypedArgs& args, size_t event) {
  const std::vector<InputShape>* shapes = args.InputShapes(event);
  const std::vector<std::string>* types = args.InputTypes(event);
  if (!shapes || !types) return 0;
  int64_t bytes = 0;
  for (size_t i = 0; i < shapes->size() && i < types->size(); ++i) {
    const InputShape& s = (*shapes)[i];
    if (s.kind != InputShape::Kind::kSizes) continue;
    int64_t elements = 1;
    for (int64_t d : s.sizes) elements *= d;
    bytes += elements * ElementBytes((*types)[i]);
  }
  return bytes;
}

// The time covered by both merged lists, as a merged list (range_utils' intersection).
std::vector<Interval> Intersect(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    const int64_t ts = std::max(a[i].ts, b[j].ts), end = std::min(a[i].end, b[j].end);
    if (ts < end) out.push_back(Interval{ts, end});
    (a[i].end < b[j].end ? i : j)++;
  }
  return out;
}

int64_t CoveredLength(std::vector<Interval> ranges) {
  return UnionLength(MergeIntervals(std::move(ranges)));
}

// Each op's step (communication.py's generate_communication_nodes): the step that holds it,
// found by walking the steps forward; an op that straddles a step boundary, and every op
// after the last step, have none ("").
std::vector<std::string> StepOfOps(const DistributedWorker& w) {
  std::vector<std::string> step(w.ops.size());
  size_t index = 0;
  for (size_t k = 0; k < w.ops.size() && index < w.steps.size(); ++k) {
    const CommunicationOp& op = w.ops[k];
    while (index < w.steps.size()) {
      if (op.ts >= w.steps[index].ts && op.end <= w.steps[index].end) {
        step[k] = w.step_names[index];
        break;
      }
      if (op.ts >= w.steps[index].end) {
        ++index;
        continue;
      }
      break;
    }
  }
  return step;
}

}  // namespace

std::vector<CommunicationOp> CommunicationOpsOf(const EventModel& model) {
  const Trace& t = model.trace();
  const RangeIds& ranges = model.ids().ranges;
  std::vector<CommunicationOp> ops;
  std::unordered_map<int64_t, size_t> op_of_external;  // the last op of each External id
  bool nccl = false, gloo = false;
  for (size_t r = 0; r < ranges.size(); ++r) {
    const uint32_t e = ranges.event[r];
    const std::string_view name = t.str(t.events.name(e));
    if (!IsPluginCollectiveName(name)) continue;
    HostNodeKind kind;
    if (!PluginHostNodeKind(t.category_name(t.events.category(e)), name, &kind)) continue;
    (IsNcclCollectiveName(name) ? nccl : gloo) = true;
    CommunicationOp op{std::string(name),
                       t.events.ts(e),
                       t.events.end(e),
                       InputBytes(model.args(), e),
                       {Interval{t.events.ts(e), t.events.end(e)}}};
    auto [it, added] = op_of_external.try_emplace(ranges.external[r], ops.size());
    if (added)
      ops.push_back(std::move(op));
    else
      ops[it->second] = std::move(op);  // the plugin keeps one op per External id
  }
  if (nccl && gloo) return {};
  if (nccl) {
    const DeviceWorkIds& work = model.ids().device_work;
    for (size_t k = 0; k < work.size(); ++k) {
      if (model.role(work.event[k]).work != DeviceWorkKind::kKernel) continue;
      auto it = op_of_external.find(work.external[k]);
      if (it == op_of_external.end()) continue;
      const uint32_t e = work.event[k];
      ops[it->second].kernel_ranges.push_back(Interval{t.events.ts(e), t.events.end(e)});
    }
  }
  auto earlier = [](const auto& a, const auto& b) {
    return a.ts != b.ts ? a.ts < b.ts : a.end > b.end;
  };
  for (CommunicationOp& op : ops)
    std::stable_sort(op.kernel_ranges.begin(), op.kernel_ranges.end(), earlier);
  std::stable_sort(ops.begin(), ops.end(), earlier);
  return ops;
}

DistributedSummary BuildDistributedSummary(std::vector<DistributedWorker> workers) {
  DistributedSummary out;
  std::sort(workers.begin(), workers.end(),
            [](const DistributedWorker& a, const DistributedWorker& b) { return a.name < b.name; });
  // loader.py: the view needs every worker's collectives, the same number of them and of their
  // ranges; the shortest duration of each over the workers is its data transfer.
  for (const DistributedWorker& w : workers)
    if (w.ops.empty() || w.ops.size() != workers[0].ops.size()) {
      out.notes.push_back("worker " + w.name +
                          (w.ops.empty()
                               ? " has no nccl:/gloo: collective"
                               : " has another number of collectives than " + workers[0].name) +
                          ": no distributed view, as in the plugin");
      return out;
    }
  if (workers.empty()) return out;
  std::vector<std::vector<std::vector<Interval>>> transfer(
      workers.size(), std::vector<std::vector<Interval>>(workers[0].ops.size()));
  for (size_t i = 0; i < workers[0].ops.size(); ++i) {
    const size_t n = workers[0].ops[i].kernel_ranges.size();
    for (const DistributedWorker& w : workers)
      if (w.ops[i].kernel_ranges.size() != n) {
        out.notes.push_back("collective " + std::to_string(i) +
                            " has another number of kernels on " + w.name + " than on " +
                            workers[0].name + ": no distributed view, as in the plugin");
        return out;
      }
    for (size_t j = 0; j < n; ++j) {
      int64_t shortest = INT64_MAX;
      for (const DistributedWorker& w : workers)
        shortest = std::min(shortest, w.ops[i].kernel_ranges[j].end - w.ops[i].kernel_ranges[j].ts);
      for (size_t k = 0; k < workers.size(); ++k) {
        const int64_t end = workers[k].ops[i].kernel_ranges[j].end;
        transfer[k][i].push_back(Interval{end - shortest, end});
      }
    }
  }

  std::vector<std::string> step_order{"all"};
  std::map<std::pair<std::string, std::string>, WorkerStepFigures> figures;  // (step, worker)
  auto figure = [&](const std::string& step, const std::string& worker) -> WorkerStepFigures& {
    if (std::find(step_order.begin(), step_order.end(), step) == step_order.end())
      step_order.push_back(step);
    WorkerStepFigures& f = figures[{step, worker}];
    f.worker = worker;
    f.step = step;
    return f;
  };
  for (size_t k = 0; k < workers.size(); ++k) {
    const DistributedWorker& w = workers[k];
    WorkerStepFigures& all = figure("all", w.name);
    // overall_parser.py's communication_overlap, per step.
    for (size_t s = 0; s < w.steps.size(); ++s) {
      const std::vector<Interval> step{w.steps[s]};
      const int64_t computation = OverlapLength(step, w.computation);
      const int64_t communication = OverlapLength(step, w.communication);
      const int64_t overlap = OverlapLength(step, Intersect(w.computation, w.communication));
      WorkerStepFigures& f = figure(w.step_names[s], w.name);
      f.computation = static_cast<double>(computation - overlap);
      f.overlapping = static_cast<double>(overlap);
      f.communication = static_cast<double>(communication - overlap);
      f.other = static_cast<double>(w.steps[s].end - w.steps[s].ts + overlap - computation -
                                    communication);
      all.computation += f.computation;
      all.overlapping += f.overlapping;
      all.communication += f.communication;
      all.other += f.other;
    }
    const double steps = static_cast<double>(std::max<size_t>(1, w.steps.size()));
    all.computation /= steps;
    all.overlapping /= steps;
    all.communication /= steps;
    all.other /= steps;

    // communication.py's analyze_communication_nodes.
    const std::vector<std::string> step_of = StepOfOps(w);
    std::vector<std::string> comm_steps;
    std::map<std::string, std::pair<std::vector<Interval>, std::vector<Interval>>> by_step;
    std::vector<std::string> op_names;
    std::map<std::string, CommunicationOpStats> stats;
    std::map<std::string, std::pair<std::vector<Interval>, std::vector<Interval>>> op_ranges;
    for (size_t i = 0; i < w.ops.size(); ++i) {
      const CommunicationOp& op = w.ops[i];
      if (!by_step.count(step_of[i])) comm_steps.push_back(step_of[i]);
      auto& [kernel, real] = by_step[step_of[i]];
      kernel.insert(kernel.end(), op.kernel_ranges.begin(), op.kernel_ranges.end());
      real.insert(real.end(), transfer[k][i].begin(), transfer[k][i].end());
      if (!stats.count(op.name)) op_names.push_back(op.name);
      CommunicationOpStats& st = stats[op.name];
      ++st.calls;
      st.bytes += op.bytes;
      auto& [op_kernel, op_real] = op_ranges[op.name];
      op_kernel.insert(op_kernel.end(), op.kernel_ranges.begin(), op.kernel_ranges.end());
      op_real.insert(op_real.end(), transfer[k][i].begin(), transfer[k][i].end());
    }
    for (const std::string& name : op_names) {
      CommunicationOpStats st = stats[name];
      st.worker = w.name;
      st.name = name;
      st.latency = CoveredLength(op_ranges[name].first);
      st.data_transfer = CoveredLength(op_ranges[name].second);
      out.ops.push_back(std::move(st));
    }
    for (const std::string& step : comm_steps) {
      const int64_t latency = CoveredLength(by_step[step].first);
      const int64_t data = CoveredLength(by_step[step].second);
      if (step.empty()) {
        out.notes.push_back("worker " + w.name + ": collectives outside every step");
        continue;
      }
      WorkerStepFigures& f = figure(step, w.name);
      f.has_wait = true;
      f.data_transfer = static_cast<double>(data);
      f.synchronizing = static_cast<double>(latency - data);
      all.data_transfer += f.data_transfer / static_cast<double>(comm_steps.size());
      all.synchronizing += f.synchronizing / static_cast<double>(comm_steps.size());
      all.has_wait = true;
    }
  }
  for (const std::string& step : step_order)
    for (const DistributedWorker& w : workers) {
      auto it = figures.find({step, w.name});
      if (it != figures.end()) out.steps.push_back(it->second);
    }
  return out;
}

DistributedSummaryRows DistributedSummaryAsRows(const DistributedSummary& s) {
  DistributedSummaryRows out;
  out.steps.columns = {"worker",        "step",  "computation",   "overlapping",
                       "communication", "other", "data_transfer", "synchronizing"};
  out.ops.columns = {"worker",      "name",          "calls",
                     "total_bytes", "avg_bytes",     "total_latency",
                     "avg_latency", "data_transfer", "avg_data_transfer"};
  auto us = [](double ns) { return Cell::Double(ns / 1000.0); };
  for (const WorkerStepFigures& f : s.steps)
    out.steps.rows.push_back({Cell::Text(f.worker), Cell::Text(f.step), us(f.computation),
                              us(f.overlapping), us(f.communication), us(f.other),
                              f.has_wait ? us(f.data_transfer) : Cell::Empty(),
                              f.has_wait ? us(f.synchronizing) : Cell::Empty()});
  for (const CommunicationOpStats& o : s.ops) {
    const double calls = static_cast<double>(o.calls);
    out.ops.rows.push_back(
        {Cell::Text(o.worker), Cell::Text(o.name), Cell::Int(o.calls), Cell::Int(o.bytes),
         Cell::Double(static_cast<double>(o.bytes) / calls), us(static_cast<double>(o.latency)),
         us(static_cast<double>(o.latency) / calls), us(static_cast<double>(o.data_transfer)),
         us(static_cast<double>(o.data_transfer) / calls)});
  }
  out.steps.notes = s.notes;
  return out;
}

}  // namespace profsh::tensorboard
