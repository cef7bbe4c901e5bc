// The kernel edges: queue lengths, the launches around event records and stream waits, then
// CPGraph._construct_graph_from_kernels (launch delays, kernel-to-kernel delays, syncs).
#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "engine/analysis/critical_path/cp_builder.h"

namespace profsh::critical_path_detail {
namespace {

// HTA's KERNEL_KERNEL_DELAY_THRESHOLD_US: a longer gap between kernels is not a delay.
constexpr int64_t kKernelKernelDelayThresholdNs = 1500 * 1000;

}  // namespace

// TraceCounters._get_queue_length_time_series_for_rank, on the whole trace (of the rank): +1 at
// each launch on its kernel's stream, -1 at each kernel a launch launched, per stream number.
void Builder::QueueLengths() {
  struct Change {
    int64_t ts;
    uint8_t kernel;  // launches first at equal times
    uint32_t ev;
    int64_t stream;
  };
  std::vector<Change> changes;
  for (size_t w = 0; w < ids_.device_work.size(); ++w) {
    const uint32_t ev = ids_.device_work.event[w];
    if (!InRank(ev) || Stream(ev) == -1) continue;
    const uint32_t r = RuntimeEventOf(ev);
    if (r == kNone || !(Flags(r).launch || Flags(r).graph_launch)) continue;
    changes.push_back({times_.Ts(ev), 1, ev, Stream(ev)});
    changes.push_back({times_.Ts(r), 0, r, Stream(ev)});
  }
  std::sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) {
    if (a.stream != b.stream) return a.stream < b.stream;
    if (a.ts != b.ts) return a.ts < b.ts;
    if (a.kernel != b.kernel) return a.kernel < b.kernel;
    return a.ev < b.ev;
  });
  int64_t queue = 0;
  for (size_t i = 0; i < changes.size(); ++i) {
    if (i == 0 || changes[i].stream != changes[i - 1].stream) queue = 0;
    queue += changes[i].kernel ? -1 : 1;
    queue_after_[changes[i].ev] = queue;
  }
}

// _get_cuda_event_record_df and _get_cuda_stream_wait_event_df: the launch a cudaEventRecord
// follows on the recorded stream, and the launch a cudaStreamWaitEvent precedes on its thread
// and stream.
void Builder::EventSyncTables() {
  const TypedArgs& args = model_.args();
  // The stream and device each recorded event was recorded on, from the syncs that wait on it.
  std::unordered_map<int64_t, std::pair<int64_t, int64_t>> record_stream;  // corr -> (gpu, stream)
  bool any_wait = false;
  for (size_t w = 0; w < ids_.device_work.size(); ++w) {
    const uint32_t ev = ids_.device_work.event[w];
    if (!IsSyncWork(ev) || !InRank(ev)) continue;
    const auto corr = args.Int(ev, KnownArg::kWaitOnEventRecordCorrelation);
    const auto stream = args.Int(ev, KnownArg::kWaitOnStream);
    if (!corr || !stream || *stream <= -1) continue;
    any_wait = true;
    record_stream.try_emplace(*corr, ids_.device_work.device[w], *stream);
  }
  if (!any_wait) return;
  struct Launch {
    int64_t ts;
    uint32_t ev;
  };
  std::map<std::pair<int64_t, int64_t>, std::vector<Launch>> by_stream;            // (gpu, stream)
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::vector<Launch>> by_thread;  // pid, tid, s
  auto ident = [](const Ident& i) { return i.is_string ? static_cast<int64_t>(i.str) : i.number; };
  for (size_t r = 0; r < ids_.runtime.size(); ++r) {
    const uint32_t ev = ids_.runtime.event[r];
    if (!InRank(ev) || !Flags(ev).launch) continue;
    const uint32_t k = kernel_of_runtime_event_[ev];
    if (k == kNone || Stream(k) == -1) continue;
    const int64_t device = ids_.device_work.device[work_of_event_[k]];
    by_stream[{device, Stream(k)}].push_back({times_.Ts(ev), ev});
    const Track& t = trace_.tracks[events_.track(ev)];
    by_thread[{ident(t.pid), ident(t.tid), Stream(k)}].push_back({times_.Ts(ev), ev});
  }
  auto by_time = [](const Launch& a, const Launch& b) {
    return a.ts != b.ts ? a.ts < b.ts : a.ev < b.ev;
  };
  for (auto& [key, launches] : by_stream) std::sort(launches.begin(), launches.end(), by_time);
  for (auto& [key, launches] : by_thread) std::sort(launches.begin(), launches.end(), by_time);
  for (size_t r = 0; r < ids_.runtime.size(); ++r) {
    const uint32_t ev = ids_.runtime.event[r];
    if (!InRank(ev)) continue;
    const int64_t ts = times_.Ts(ev);
    if (Flags(ev).event_record) {
      auto rs = record_stream.find(ids_.runtime.correlation[r]);
      if (rs == record_stream.end()) continue;
      auto it = by_stream.find(rs->second);
      if (it == by_stream.end()) continue;
      auto after = std::upper_bound(it->second.begin(), it->second.end(), ts,
                                    [](int64_t t, const Launch& l) { return t < l.ts; });
      if (after != it->second.begin())
        launch_before_record_[ids_.runtime.correlation[r]] = std::prev(after)->ev;
    } else if (Flags(ev).stream_wait_call) {
      const uint32_t k = kernel_of_runtime_event_[ev];  // its Stream Wait Event
      if (k == kNone) continue;
      const Track& t = trace_.tracks[events_.track(ev)];
      auto it = by_thread.find({ident(t.pid), ident(t.tid), Stream(k)});
      if (it == by_thread.end()) continue;
      auto next = std::lower_bound(it->second.begin(), it->second.end(), ts,
                                   [](const Launch& l, int64_t t) { return l.ts < t; });
      if (next != it->second.end()) launch_after_wait_[ev] = next->ev;
    }
  }
}

// _construct_graph_from_kernels.
void Builder::KernelEdges() {
  const TypedArgs& args = model_.args();
  struct Row {
    int64_t sort_by;
    uint32_t ev;
  };
  std::vector<Row> rows;
  for (size_t ev = 0; ev < events_.size(); ++ev) {
    if (!clipped_[ev] || !HasCorrelation(ev)) continue;
    if (Stream(ev) == -1 && !Flags(ev).event_sync && !Flags(ev).context_sync) continue;
    // Sorted by start, but a sync by its end: a sync can span the copy it waits for.
    rows.push_back({IsSyncWork(ev) ? times_.End(ev) : times_.Ts(ev), static_cast<uint32_t>(ev)});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.sort_by < b.sort_by; });

  std::vector<int64_t> stream_order;  // streams in the order they got a kernel
  std::unordered_map<int64_t, uint32_t> last_node;
  std::unordered_map<uint32_t, uint32_t> kernel_sync;  // kernel -> the kernel it waits for
  auto sync_to_cpu = [&](uint32_t gpu_node, uint32_t runtime) {
    if (runtime == kNone || end_node_[runtime] == kNone) return;
    AddSpanEdge(gpu_node, end_node_[runtime], CpEdgeType::kSyncDependency);
  };
  for (const Row& row : rows) {
    const uint32_t ev = row.ev;
    const NameFlags& f = Flags(ev);
    if (IsSyncWork(ev)) {
      const uint32_t runtime = RuntimeEventOf(ev);
      if (f.stream_wait_event || f.event_sync) {
        const auto corr = args.Int(ev, KnownArg::kWaitOnEventRecordCorrelation);
        auto before = corr ? launch_before_record_.find(*corr) : launch_before_record_.end();
        const uint32_t src_kernel = before == launch_before_record_.end()
                                        ? kNone
                                        : kernel_of_runtime_event_[before->second];
        if (src_kernel == kNone) {
          ++unmatched_waits_;
          continue;
        }
        if (f.stream_wait_event) {
          auto next =
              runtime == kNone ? launch_after_wait_.end() : launch_after_wait_.find(runtime);
          if (next == launch_after_wait_.end()) continue;
          const uint32_t dest_kernel = kernel_of_runtime_event_[next->second];
          if (dest_kernel != kNone) kernel_sync[dest_kernel] = src_kernel;
        } else if (end_node_[src_kernel] != kNone) {
          sync_to_cpu(end_node_[src_kernel], runtime);
        }
      } else if (f.stream_sync) {
        auto it = last_node.find(Stream(ev));
        if (it != last_node.end()) sync_to_cpu(it->second, runtime);
      } else if (f.context_sync) {
        for (int64_t s : stream_order) sync_to_cpu(last_node[s], runtime);
      }
      continue;
    }
    const uint32_t start = start_node_[ev], end = end_node_[ev];
    if (start == kNone || end == kNone) continue;
    Attribute(AddSpanEdge(start, end, CpEdgeType::kOperatorKernel), kNone);
    const int64_t stream = Stream(ev);
    const uint32_t runtime = RuntimeEventOf(ev);
    const bool graph_kernel = runtime != kNone && Flags(runtime).graph_launch;
    auto last_it = last_node.find(stream);
    const uint32_t last = last_it == last_node.end() ? kNone : last_it->second;

    uint32_t sync_end = kNone;
    bool waits = false;
    if (auto ks = kernel_sync.find(ev); ks != kernel_sync.end()) {
      waits = true;
      sync_end = end_node_[ks->second];
      if (sync_end == kNone) {
        waits = false;
      } else {
        AddSpanEdge(sync_end, start, CpEdgeType::kSyncDependency);
      }
      kernel_sync.erase(ks);
    }
    const int64_t runtime_ts = runtime == kNone ? 0 : times_.Ts(runtime);
    auto queue = [&](uint32_t e) -> std::optional<int64_t> {
      auto it = queue_after_.find(e);
      if (it == queue_after_.end()) return std::nullopt;
      return it->second;
    };
    // HTA: nothing was queued on the stream at the launch and nothing after the kernel. A graph
    // launch queues all its kernels at once, so its kernels ask only that the stream was idle.
    const bool queue_empty =
        graph_kernel || (queue(runtime) == 1 && runtime != kNone && queue(ev) == 0);
    bool launch_delay = false;
    if (runtime != kNone && queue_empty && (last == kNone || graph_.node_ts[last] < runtime_ts) &&
        (!waits || graph_.node_ts[sync_end] < runtime_ts) && start_node_[runtime] != kNone) {
      AddSpanEdge(start_node_[runtime], start, CpEdgeType::kKernelLaunchDelay);
      launch_delay = true;
    } else if (last != kNone &&
               graph_.node_ts[start] - graph_.node_ts[last] < kKernelKernelDelayThresholdNs &&
               (!waits || graph_.node_ts[sync_end] < graph_.node_ts[last])) {
      Attribute(AddSpanEdge(last, start, CpEdgeType::kKernelKernelDelay), kNone);
    }
    // A kernel of a graph launch always hangs off its launch (HTA loses them: HTA#290).
    if (!launch_delay && (options_.zero_weight_launch_edges || graph_kernel) && runtime != kNone &&
        start_node_[runtime] != kNone)
      AddSpanEdge(start_node_[runtime], start, CpEdgeType::kKernelLaunchDelay, true);
    if (last == kNone) stream_order.push_back(stream);
    last_node[stream] = end;
  }
}

}  // namespace profsh::critical_path_detail
