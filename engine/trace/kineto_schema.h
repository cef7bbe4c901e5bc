// The names of Kineto's (PyTorch profiler's) trace schema, spelled once. profsh reads them in
// traces that torch wrote and writes them itself (the session layer's emission of live
// recordings, the exporters), so that every analysis reads a live recording as it reads torch's
// own trace. Who writes and who reads each:
//   - event arguments: written by torch and by engine/session's Kineto emitter; read by
//     engine/analysis (function_events: ids, shapes, stacks, flops, what key_averages and the
//     flamegraph's Python stacks are made of; memory_timeline: the [memory] arguments). The
//     exporters write every argument back as it was read, whatever its name.
//   - categories: written by torch/Kineto, by the emitter and by the in-process recorder
//     (bindings/lua_profile.cpp: user_annotation); read by function_events to tell operators,
//     runtime calls, kernels and annotations apart.
//   - per-event numbers (ids, addresses, sizes): the JSON importer keeps them inline, not in the
//     interned schema (engine/importers/chrome_event_schema.cpp, IsVolatileKey).
//   - metadata events ("M"): written by torch, the emitter and the in-process recorder
//     (bindings/lua_profile.cpp); read by engine/trace (process and thread names and order).
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

namespace profsh::kineto {

// --- event arguments ---
inline constexpr std::string_view kInputDims = "Input Dims";            // JSON list of shapes
inline constexpr std::string_view kInputType = "Input type";            // JSON list of dtypes
inline constexpr std::string_view kSequenceNumber = "Sequence number";  // autograd node
inline constexpr std::string_view kFwdThreadId = "Fwd thread id";       // of a backward op
inline constexpr std::string_view kCallStack = "Call stack";            // "a.py(1): f;b.py(2): g"
inline constexpr std::string_view kFlops = "flops";
inline constexpr std::string_view kExternalId = "External id";   // links ops, launches, kernels
inline constexpr std::string_view kCorrelation = "correlation";  // links launches and kernels
inline constexpr std::string_view kDevice = "device";
inline constexpr std::string_view kStream = "stream";    // of device work
inline constexpr std::string_view kCopyBytes = "bytes";  // of a memcpy or memset
inline constexpr std::string_view kGrid = "grid";        // of a kernel: JSON [x, y, z]
inline constexpr std::string_view kBlock = "block";      // of a kernel: JSON [x, y, z]
// Of a kernel: CUPTI's estimates of its blocks per SM and its achieved occupancy (in %).
inline constexpr std::string_view kBlocksPerSm = "blocks per SM";
inline constexpr std::string_view kAchievedOccupancy = "est. achieved occupancy %";
// "External id" as Kineto spelled it on runtime calls and device work before torch 1.9 (the
// TensorBoard plugin's sample traces): read where "External id" is absent.
inline constexpr std::string_view kExternalIdLowercase = "external id";
inline constexpr std::string_view kEvIdx = "Ev Idx";
inline constexpr std::string_view kPythonId = "Python id";
inline constexpr std::string_view kPythonParentId = "Python parent id";      // read: importer
inline constexpr std::string_view kPythonModuleId = "Python module id";  // of an nn.Module range
inline constexpr std::string_view kRecordFunctionId = "Record function id";  // read: importer
inline constexpr std::string_view kConcreteInputs = "Concrete Inputs";  // torch 2.x: scalar inputs
inline constexpr std::string_view kInputStrides = "Input Strides";      // torch 2.x
inline constexpr std::string_view kMemoryBandwidth = "memory bandwidth (GB/s)";  // of a memcpy
// cuda_sync events (Event Sync, Stream Wait Event): the stream and the cudaEventRecord call
// (its correlation) that recorded the event waited on
inline constexpr std::string_view kWaitOnStream = "wait_on_stream";
inline constexpr std::string_view kWaitOnEventRecordCorrelation =
    "wait_on_cuda_event_record_corr_id";
// collectives (record_param_comms; NCCL kernels in newer Kineto)
inline constexpr std::string_view kProcessGroupName = "Process Group Name";
inline constexpr std::string_view kCollectiveName = "Collective name";
inline constexpr std::string_view kSeq = "Seq";  // the collective's number in its group
inline constexpr std::string_view kInMsgNelems = "In msg nelems";    // elements sent
inline constexpr std::string_view kOutMsgNelems = "Out msg nelems";  // elements received
inline constexpr std::string_view kDtype = "dtype";  // their torch ScalarType: "Float", ...
// [memory] instants
inline constexpr std::string_view kTotalAllocated = "Total Allocated";
inline constexpr std::string_view kTotalReserved = "Total Reserved";  // read: importer
inline constexpr std::string_view kBytes = "Bytes";
inline constexpr std::string_view kAddr = "Addr";
inline constexpr std::string_view kDeviceType = "Device Type";  // 0: CPU, 1: CUDA, ...
inline constexpr std::string_view kDeviceId = "Device Id";      // -1 for the host
// flows
inline constexpr std::string_view kFlowId = "id";
inline constexpr std::string_view kBindingPoint = "bp";  // "e": bind to the enclosing slice

// --- event names ---
inline constexpr std::string_view kMemoryEvent = "[memory]";
inline constexpr std::string_view kOutOfMemoryEvent = "[OutOfMemory]";  // read: function_events
inline constexpr std::string_view kCpuMemoryCounter = "CPU Memory";

// --- metadata events (phase "M") and their arguments ---
inline constexpr std::string_view kProcessName = "process_name";             // arg kMetaName
inline constexpr std::string_view kProcessLabels = "process_labels";         // arg kMetaLabels
inline constexpr std::string_view kProcessSortIndex = "process_sort_index";  // arg kMetaSortIndex
inline constexpr std::string_view kThreadName = "thread_name";               // arg kMetaName
inline constexpr std::string_view kThreadSortIndex = "thread_sort_index";    // arg kMetaSortIndex
inline constexpr std::string_view kMetaName = "name";
inline constexpr std::string_view kMetaLabels = "labels";
inline constexpr std::string_view kMetaSortIndex = "sort_index";

// --- categories ---
inline constexpr std::string_view kCpuOp = "cpu_op";
inline constexpr std::string_view kUserAnnotation = "user_annotation";
inline constexpr std::string_view kGpuUserAnnotation = "gpu_user_annotation";
inline constexpr std::string_view kCpuInstantEvent = "cpu_instant_event";
inline constexpr std::string_view kPythonFunction = "python_function";
inline constexpr std::string_view kKernel = "kernel";
inline constexpr std::string_view kGpuMemcpy = "gpu_memcpy";
inline constexpr std::string_view kGpuMemset = "gpu_memset";
inline constexpr std::string_view kCudaRuntime = "cuda_runtime";
inline constexpr std::string_view kCudaDriver = "cuda_driver";
inline constexpr std::string_view kMemoryCategory = "memory";
inline constexpr std::string_view kFwdBwd = "fwdbwd";  // the flow of a backward op to its forward
inline constexpr std::string_view kAc2g = "ac2g";      // the flow of a launch to its kernel

// --- step markers ---
inline constexpr std::string_view kProfilerStepPrefix = "ProfilerStep#";
// N of a "ProfilerStep#N..." name (torch's step ranges), read as HTA's re.match of
// "ProfilerStep#(\d+)" reads it: digits right after the prefix, anything after them. None when
// no digit follows; 0 when the digits overflow.
inline std::optional<int64_t> ProfilerStepNumber(std::string_view name) {
  if (!name.starts_with(kProfilerStepPrefix)) return std::nullopt;
  size_t end = kProfilerStepPrefix.size();
  while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
  if (end == kProfilerStepPrefix.size()) return std::nullopt;
  int64_t number = 0;
  std::from_chars(name.data() + kProfilerStepPrefix.size(), name.data() + end, number);
  return number;
}

}  // namespace profsh::kineto
