// Which CUDA calls of one stream still wait for their device work, so that a window is handed
// over once every launch made in it has reported, not after a fixed time. CUPTI hands a launch's
// call (runtime or driver API record) over when the call returns and its kernel, copy or set
// once the device has finished it, both under one correlation id, in any order of buffers.
//
// Only calls that launch device work are waited for, decided by the call's name: kernel
// launches, copies and sets. Calls that launch none (cudaGetDevice, a synchronisation, an
// allocation, cudaLaunchHostFunc), calls that failed, and launches made while their thread was
// capturing a CUDA graph (they only record graph nodes) are let go. Graph launches are not
// waited for either (CUPTI gives a graph's nodes the launch's correlation, and the host does
// not know how many nodes a graph has): they are counted instead.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/decoding/stream_names.h"
#include "engine/stream/gpu_records.h"

namespace profsh {

enum class LaunchKind : uint8_t { kNone, kDeviceWork, kGraph, kCaptureBegin, kCaptureEnd };
// What a call does, by its name as CUPTI gives it (runtime names without their _vNNNN suffix).
LaunchKind ClassifyCall(std::string_view name);

class GpuLaunchWaits {
 public:
  // A GPU record as decoded, in stream order.
  void Observe(const stream::GpuRecord& r);
  // Looks at the calls whose names are known now (a call's name may come in the stream after
  // its record, in the same drain round): those that launch no device work are let go.
  void Classify(const StreamNames& names);
  // Launch calls begun in [begin, end) whose device work has not come.
  uint64_t Waiting(uint64_t begin, uint64_t end) const;

  struct Released {
    uint64_t unreported = 0;  // launches whose device work had not come
    uint64_t graphs = 0;      // graph launches (never waited for)
  };
  // The window [begin, end) is handed over: lets go of its calls, and of everything older
  // (calls between windows, device work whose call came to an older window).
  Released Release(uint64_t begin, uint64_t end);
  // Lets go of what began before `ticks` and belongs to no window that waits (between windows,
  // after the last one): a long job's launches outside windows are not kept.
  void Forget(uint64_t ticks) { Release(0, ticks); }

  size_t tracked() const { return calls_.size() + early_.size(); }

 private:
  struct Call {
    uint64_t begin;
    int64_t tid;
    uint32_t name;
    LaunchKind kind;
    bool classified;
  };
  struct Capture {
    int64_t tid;
    uint64_t begin, end;  // end UINT64_MAX: still capturing
  };
  bool Captured(const Call& c) const;

  std::unordered_map<uint64_t, Call> calls_;      // correlation -> call still waiting
  std::unordered_map<uint64_t, uint64_t> early_;  // correlation -> start of work before its call
  std::vector<Capture> captures_;
};

}  // namespace profsh
