#include "engine/decoding/gpu_launch_waits.h"

#include <algorithm>
#include <type_traits>

namespace profsh {

namespace st = stream;

namespace {

bool StartsWithAny(std::string_view name, std::initializer_list<std::string_view> prefixes) {
  for (std::string_view p : prefixes) {
    if (name.starts_with(p)) return true;
  }
  return false;
}

}  // namespace

LaunchKind ClassifyCall(std::string_view name) {
  // Both APIs' spellings: the runtime's (cudaLaunchKernel, cudaLaunchKernel_ptsz,
  // cudaMemcpyAsync, ...) and the driver's (cuLaunchKernel, cuLaunchKernelEx, cuMemcpyHtoD_v2,
  // cuMemsetD8_v2, ...). cu/cudaLaunchHostFunc runs a host function: no device record.
  if (StartsWithAny(name, {"cudaGraphLaunch", "cuGraphLaunch"})) return LaunchKind::kGraph;
  if (StartsWithAny(name, {"cudaStreamBeginCapture", "cuStreamBeginCapture"}))
    return LaunchKind::kCaptureBegin;
  if (StartsWithAny(name, {"cudaStreamEndCapture", "cuStreamEndCapture"}))
    return LaunchKind::kCaptureEnd;
  if (StartsWithAny(name, {"cudaLaunchHostFunc", "cuLaunchHostFunc"})) return LaunchKind::kNone;
  if (StartsWithAny(name, {"cudaLaunchKernel", "cudaLaunchCooperativeKernel", "cuLaunchKernel",
                           "cuLaunchCooperativeKernel", "cuLaunchGrid", "cudaMemcpy", "cudaMemset",
                           "cuMemcpy", "cuMemset"}))
    return LaunchKind::kDeviceWork;
  // The oldest launch calls: cudaLaunch (CUDA < 7) and cuLaunch, with their per-thread-stream
  // forms.
  if (name == "cudaLaunch" || name == "cudaLaunch_ptsz" || name == "cuLaunch")
    return LaunchKind::kDeviceWork;
  return LaunchKind::kNone;
}

void GpuLaunchWaits::Observe(const st::GpuRecord& r) {
  st::VisitGpuRecord(r, [&](const auto& rec) {
    using Record = std::decay_t<decltype(rec)>;
    if constexpr (std::is_same_v<Record, st::GpuApi>) {
      if (rec.return_value != 0) return;          // a call that failed launched nothing
      if (early_.erase(rec.correlation)) return;  // its device work came first
      calls_[rec.correlation] = Call{rec.start, static_cast<int64_t>(rec.tid),
                                     static_cast<uint32_t>(rec.name), LaunchKind::kNone, false};
    } else if constexpr (st::DeviceWorkGpuRecord<Record>) {
      // A graph's nodes: their launch is not waited for, and one launch has many of them.
      if constexpr (requires { rec.graph; }) {
        if (rec.graph != 0) return;
      }
      if (calls_.erase(rec.correlation) == 0) early_.emplace(rec.correlation, rec.start);
    }
  });
}

bool GpuLaunchWaits::Captured(const Call& c) const {
  for (const Capture& k : captures_) {
    if (k.tid == c.tid && k.begin <= c.begin && c.begin <= k.end) return true;
  }
  return false;
}

void GpuLaunchWaits::Classify(const StreamNames& names) {
  // Capture calls first, in time order, so that the launches made inside a capture are known.
  std::vector<Call> capture_calls;
  for (auto it = calls_.begin(); it != calls_.end();) {
    Call& c = it->second;
    if (c.classified) {
      ++it;
      continue;
    }
    if (!names.Known(c.name)) {  // its name was refused: nothing to decide by
      it = calls_.erase(it);
      continue;
    }
    c.kind = ClassifyCall(names.Text(c.name));
    c.classified = true;
    if (c.kind == LaunchKind::kCaptureBegin || c.kind == LaunchKind::kCaptureEnd) {
      capture_calls.push_back(c);
      it = calls_.erase(it);
    } else {
      ++it;
    }
  }
  std::sort(capture_calls.begin(), capture_calls.end(),
            [](const Call& a, const Call& b) { return a.begin < b.begin; });
  for (const Call& c : capture_calls) {
    if (c.kind == LaunchKind::kCaptureBegin) {
      captures_.push_back(Capture{c.tid, c.begin, UINT64_MAX});
      continue;
    }
    for (Capture& k : captures_) {
      if (k.tid == c.tid && k.end == UINT64_MAX && k.begin <= c.begin) k.end = c.begin;
    }
  }
  for (auto it = calls_.begin(); it != calls_.end();) {
    const Call& c = it->second;
    if (c.kind == LaunchKind::kNone || (c.kind == LaunchKind::kDeviceWork && Captured(c))) {
      it = calls_.erase(it);
    } else {
      ++it;
    }
  }
}

uint64_t GpuLaunchWaits::Waiting(uint64_t begin, uint64_t end) const {
  uint64_t n = 0;
  for (const auto& [correlation, c] : calls_) {
    if (c.kind == LaunchKind::kDeviceWork && c.begin >= begin && c.begin < end) ++n;
  }
  return n;
}

GpuLaunchWaits::Released GpuLaunchWaits::Release(uint64_t begin, uint64_t end) {
  Released out;
  for (auto it = calls_.begin(); it != calls_.end();) {
    const Call& c = it->second;
    if (c.begin >= end) {
      ++it;
      continue;
    }
    if (c.begin >= begin && c.kind == LaunchKind::kDeviceWork) ++out.unreported;
    if (c.begin >= begin && c.kind == LaunchKind::kGraph) ++out.graphs;
    it = calls_.erase(it);
  }
  // Device work starts after its call: work that started before `end` has its call before it.
  std::erase_if(early_, [end](const auto& e) { return e.second < end; });
  std::erase_if(captures_, [end](const Capture& k) { return k.end < end; });
  return out;
}

}  // namespace profsh
