// Each CPU thread's call stack as HTA's CallStackGraph makes it, walked depth first as
// CPGraph._construct_graph_from_call_stack walks it.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "engine/analysis/critical_path/cp_builder.h"

namespace profsh::critical_path_detail {

// _construct_graph_from_call_stacks: each CPU thread's call stack (HTA's CallStackGraph),
// walked depth first; the backward thread is merged into the forward thread when each is one.
void Builder::CallStackEdges() {
  struct ThreadKey {
    int64_t pid, tid;
    bool operator<(const ThreadKey& o) const { return pid != o.pid ? pid < o.pid : tid < o.tid; }
  };
  auto ident = [&](const Ident& i) { return i.is_string ? static_cast<int64_t>(i.str) : i.number; };
  // HTA's _get_tid_for_event: the one thread with cpu_op or user_annotation events so named.
  auto only_tid = [&](bool NameFlags::*flag) -> std::optional<int64_t> {
    std::optional<int64_t> tid;
    for (size_t ev = 0; ev < events_.size(); ++ev) {
      if (!clipped_[ev] || !(Flags(ev).*flag)) continue;
      const TemplateRole& r = model_.role(ev);
      if (r.role != EventRole::kCpuOp &&
          !(r.role == EventRole::kAnnotation && r.source == AnnotationSource::kRecordFunction))
        continue;
      const int64_t t = ident(trace_.tracks[events_.track(ev)].tid);
      if (tid && *tid != t) return std::nullopt;
      tid = t;
    }
    return tid;
  };
  const std::optional<int64_t> fwd = only_tid(&NameFlags::forward);
  const std::optional<int64_t> bwd = only_tid(&NameFlags::autograd);
  const bool merge = fwd && bwd && *fwd != *bwd;

  std::map<ThreadKey, std::vector<uint32_t>> threads;
  std::vector<uint8_t> gpu_thread(trace_.tracks.size(), 0);
  for (size_t ev = 0; ev < events_.size(); ++ev)
    if (clipped_[ev] && Stream(ev) > 0) gpu_thread[events_.track(ev)] = 1;
  for (size_t ev = 0; ev < events_.size(); ++ev) {
    if (!clipped_[ev] || Stream(ev) != -1 || gpu_thread[events_.track(ev)]) continue;
    const Track& t = trace_.tracks[events_.track(ev)];
    int64_t tid = ident(t.tid);
    if (merge && tid == *bwd) tid = *fwd;
    threads[{ident(t.pid), tid}].push_back(static_cast<uint32_t>(ev));
  }
  for (const auto& [key, thread_events] : threads) ThreadEdges(thread_events);
}

void Builder::ThreadEdges(const std::vector<uint32_t>& thread_events) {
  // CallStackGraph._construct_call_stack_graph: starts and ends in compare_events' order; a
  // start's parent is the top of the stack, an end pops the top.
  struct Mark {
    int64_t time, dur;
    uint32_t ev;
    bool start;
  };
  std::vector<Mark> marks;
  marks.reserve(thread_events.size() * 2);
  for (uint32_t ev : thread_events) {
    const int64_t dur = std::max<int64_t>(times_.Dur(ev), 0);
    marks.push_back({times_.Ts(ev), dur, ev, true});
    marks.push_back({times_.Ts(ev) + dur, dur, ev, false});
  }
  auto before = [](const Mark& x, const Mark& y) {
    if (x.ev == y.ev) return x.start && !y.start;
    if (x.time != y.time) return x.time < y.time;
    if (x.start == y.start) {
      if (x.dur == y.dur) return x.start ? x.ev < y.ev : x.ev > y.ev;
      return x.start ? x.dur > y.dur : x.dur < y.dur;
    }
    if (x.dur > 0 && y.dur > 0) return !x.start;
    if (x.dur == 0 && y.dur == 0) return x.ev < y.ev;
    return x.start;
  };
  std::stable_sort(marks.begin(), marks.end(), before);
  std::unordered_map<uint32_t, uint32_t> local;  // event -> index in thread_events order
  std::vector<uint32_t> parent, first_child, next_sibling, last_child;
  std::vector<uint32_t> order;  // local index -> event
  const uint32_t root = 0;
  order.push_back(kNone);
  parent.push_back(kNone);
  first_child.push_back(kNone);
  next_sibling.push_back(kNone);
  last_child.push_back(kNone);
  std::vector<uint32_t> stack;
  for (const Mark& m : marks) {
    if (m.start) {
      const uint32_t p = stack.empty() ? root : stack.back();
      const uint32_t c = static_cast<uint32_t>(order.size());
      order.push_back(m.ev);
      parent.push_back(p);
      first_child.push_back(kNone);
      next_sibling.push_back(kNone);
      last_child.push_back(kNone);
      if (last_child[p] == kNone)
        first_child[p] = c;
      else
        next_sibling[last_child[p]] = c;
      last_child[p] = c;
      stack.push_back(c);
    } else if (!stack.empty()) {
      stack.pop_back();
    }
  }

  // _construct_graph_from_call_stack's depth-first walk.
  uint32_t last = kNone, last_parent = kNone;
  int depth = 0;
  auto event_of = [&](uint32_t local_index) { return order[local_index]; };
  auto enter = [&](uint32_t c) {
    const uint32_t ev = event_of(c);
    if (ev == kNone || start_node_[ev] == kNone || end_node_[ev] == kNone) return;
    const uint32_t s = start_node_[ev];
    if (last != kNone && !SharesRuntimeLock(last, s)) {
      const CpEdgeType type = depth == 0 ? CpEdgeType::kDependency : CpEdgeType::kOperatorKernel;
      Attribute(AddSpanEdge(last, s, type), last_parent);
    }
    last = s;
    last_parent = event_of(parent[c]);
    ++depth;
  };
  auto exit = [&](uint32_t c) {
    const uint32_t ev = event_of(c);
    if (ev == kNone || start_node_[ev] == kNone || end_node_[ev] == kNone) return;
    const uint32_t e = end_node_[ev];
    if (last != kNone && !SharesRuntimeLock(last, e)) {
      Attribute(AddSpanEdge(last, e, CpEdgeType::kOperatorKernel, Flags(ev).blocking), last_parent);
    }
    last = e;
    last_parent = event_of(parent[c]);
    --depth;
  };
  // Iterative: a call stack can be deep.
  std::vector<std::pair<uint32_t, bool>> walk{{root, false}};
  while (!walk.empty()) {
    auto [c, entered] = walk.back();
    if (!entered) {
      walk.back().second = true;
      enter(c);
      std::vector<uint32_t> children;
      for (uint32_t k = first_child[c]; k != kNone; k = next_sibling[k]) children.push_back(k);
      for (auto it = children.rbegin(); it != children.rend(); ++it) walk.push_back({*it, false});
    } else {
      walk.pop_back();
      exit(c);
    }
  }
}

}  // namespace profsh::critical_path_detail
