// The cuda activity's records (kGpuActivity blocks, stream_format.h) as Kineto-shaped events,
// per window: kernels, copies and sets on their device's stream tracks with Kineto's arguments,
// runtime and driver calls on the launching thread, synchronisations, CUPTI's overheads, GPU
// memory as [memory]
// instants, ac2g flows from each launch to its device work, the GPU projection of every CPU
// range (gpu_user_annotation), device and stream names, and the trace's deviceProperties.
//
// A kernel belongs to the window of its launch (the runtime or driver call with its
// correlation), so a window holds the GPU work its steps launched even when it ends later.
// Kernels reach the analyses' operators the way Kineto's do: the launch call nests in the
// innermost range or operator open on its thread, and names the kernel by correlation.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/decoding/kineto_emitter.h"
#include "engine/stream/gpu_records.h"

namespace profsh {

// A launch: the runtime or driver call that a device record's correlation names.
struct GpuLaunch {
  int64_t tid = 0;
  uint64_t begin = 0, end = 0;  // ticks
  int window = -1;
  uint32_t name = 0;
  uint8_t api = 0;  // GpuApiKind
};

struct GpuCounts {
  uint64_t kernels = 0, copies = 0, sets = 0, calls = 0, syncs = 0, memory = 0, overheads = 0;
  uint64_t calls_left_out = 0;  // queries Kineto leaves out of its traces (cuda_call_filter.h)
  uint64_t cupti_dropped = 0, buffers_refused = 0, kinds_ignored = 0;  // totals, as reported
  uint64_t untimed = 0, unwritten = 0;                                 // the same
};

// The records a window shows as events (gpu_records.h); the others describe devices and
// contexts or count losses.
#define PROFSH_GPU_EMITTED_RECORDS(E) \
  E(GpuKernel)                        \
  E(GpuMemcpy)                        \
  E(GpuMemset)                        \
  E(GpuApi)                           \
  E(GpuSync)                          \
  E(GpuOverhead)                      \
  E(GpuMemory)

class GpuEmitter : public EmitterState {
 public:
  GpuEmitter(KinetoEmitter& cpu, const TickClock& clock, const StreamNames& names)
      : EmitterState(clock, names), cpu_(cpu) {}
  // The stream's place among the session's streams (0 for the first). CUPTI numbers each
  // image's correlations from 1 and Kineto numbers GPU processes by device, so the stream with
  // index k > 0 writes its correlations, External ids and flow ids as k·2³² + CUPTI's number
  // and its device tracks as pid k·2³² + device: two processes' kernels never share a launch,
  // a flow or a "GPU N" track. The first stream's are Kineto's own numbers.
  void SetStreamIndex(uint32_t index) { stream_base_ = static_cast<uint64_t>(index) << 32; }

  // A launch call: recorded for the device work that names its correlation (any window).
  void Launch(uint64_t correlation, const GpuLaunch& launch) { launches_[correlation] = launch; }
  const GpuLaunch* FindLaunch(uint64_t correlation) const {
    auto it = launches_.find(correlation);
    return it == launches_.end() ? nullptr : &it->second;
  }
  void Device(const stream::GpuDevice& d) { devices_[d.id] = d; }
  void Context(const stream::GpuContext& c) { context_device_[c.context] = c.device; }
  // A cudaEventRecord: what later Event Syncs and Stream Wait Events on that event wait for.
  void CudaEventRecorded(const stream::GpuCudaEvent& e);
  // One record (times already in ticks) into `window`.
  void Record(size_t window, const stream::GpuRecord& r, const GpuLaunch* launch);
  // A CPU range of the window, for the GPU projections.
  void Range(size_t window, int64_t tid, uint64_t begin, uint64_t end, uint32_t name);
  // Before the window is sealed: projections, flows, names, device properties.
  // `rank`: the process's RANK, if any, as a label of its device tracks too.
  void Seal(size_t window, std::string_view rank = {});
  // Launches of windows up to `window` are no longer needed.
  void Forget(int window);

  GpuCounts counts;

 private:
  struct DeviceWork {
    uint64_t begin, end;
    uint64_t device, stream, correlation;
  };
  struct CpuRange {
    int64_t tid;
    uint64_t begin, end;
    uint32_t name;
  };
  std::unordered_map<uint32_t, std::string> kernel_names_;
  std::unordered_map<uint32_t, bool> calls_left_out_;  // by the call's name
  struct Output {
    std::unordered_map<std::string, uint32_t> schemas;  // by a key of the fixed values
    std::vector<DeviceWork> work;
    std::vector<CpuRange> ranges;
    std::map<uint64_t, std::pair<int64_t, uint64_t>> launch_of;  // correlation -> (tid, begin)
    std::map<std::pair<uint64_t, uint64_t>, bool> tracks;        // (device, stream)
  };

  // A correlation as written (unique in the session), and a device's track pid.
  int64_t Id(uint64_t correlation) const {
    return static_cast<int64_t>(stream_base_ | (correlation & 0xffffffffu));
  }
  Ident DevicePid(uint64_t device) const {
    return Ident{static_cast<int64_t>(stream_base_ + device), 0, false};
  }
  uint64_t DeviceOf(uint64_t context) const {
    auto it = context_device_.find(context);
    return it == context_device_.end() ? 0 : it->second;
  }
  // A kernel's name as Kineto writes it: demangled once per name (kernel_names_).
  const std::string& KernelName(uint32_t name);
  uint32_t Schema(Output& o, TraceBuilder& b, const std::string& key, auto&& build);
  void Add(TraceBuilder& b, int64_t origin, char phase, uint64_t begin, uint64_t end,
           std::string_view name, std::string_view category, Ident pid, Ident tid, uint32_t schema);
  // One event per record of the kinds a window shows; `launch` is the record's launch call.
#define PROFSH_GPU_EMIT(Type)                                                  \
  void Emit(Output& o, TraceBuilder& b, int64_t origin, const stream::Type& r, \
            const GpuLaunch* launch);
  PROFSH_GPU_EMITTED_RECORDS(PROFSH_GPU_EMIT)
#undef PROFSH_GPU_EMIT
  // The inline values of a copy or set (AddTransferArgs' in the .cpp).
  template <typename Transfer>
  void TransferWords(const Transfer& r);
  void Projections(Output& o, TraceBuilder& b, int64_t origin);
  void Flows(Output& o, TraceBuilder& b, int64_t origin);

  KinetoEmitter& cpu_;
  uint64_t stream_base_ = 0;
  std::unordered_map<uint64_t, GpuLaunch> launches_;
  std::map<uint64_t, stream::GpuDevice> devices_;
  std::unordered_map<uint64_t, uint64_t> context_device_;
  std::unordered_map<size_t, Output> outputs_;
  std::map<uint64_t, int64_t> memory_total_;  // device -> bytes, over the whole run

  // Kineto's getWaitEventInfo: the records of each (context, event), by correlation; a sync
  // waits for the last one recorded before its own call. Bounded: records over 2^20 calls older
  // than the newest are forgotten (CudaEventRecorded).
  struct EventRecord {
    uint64_t correlation, stream;
  };
  const EventRecord* EventRecordBefore(uint64_t context, uint64_t event,
                                       uint64_t correlation) const;
  std::map<std::pair<uint64_t, uint64_t>, std::vector<EventRecord>> event_records_;
  uint64_t latest_event_record_ = 0;  // the highest correlation of a record so far
  uint64_t event_records_added_ = 0;
};

// Kineto's estimate of a kernel's achieved occupancy, in percent (rounded): resident blocks per
// SM limited by the device's warps, blocks and registers (allocated per warp in units of 256)
// and shared memory per SM, and by the blocks the grid has per SM.
int64_t EstimatedOccupancy(const stream::GpuKernel& kernel, const stream::GpuDevice& device);

}  // namespace profsh
