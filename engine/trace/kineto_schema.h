// The names of Kineto's (PyTorch profiler's) trace schema, spelled once. profsh reads them in
// traces that torch wrote and writes them itself (the session layer's emission of live
// recordings, the exporters), so that every analysis reads a live recording as it reads torch's
// own trace. Who writes and who reads each:
//   - event arguments: written by torch and by engine/session's Kineto emitter; read by
//     engine/analysis (function_events, key_averages, arg_reader), engine/flamegraph (stacks)
//     and the Chrome exporter (flows).
//   - categories: written by torch/Kineto and by the emitter; read by the analyses to tell
//     operators, runtime calls, kernels and annotations apart.
#pragma once

#include <string_view>

namespace profsh::kineto {

// --- event arguments ---
inline constexpr std::string_view kInputDims = "Input Dims";        // JSON list of shapes
inline constexpr std::string_view kInputType = "Input type";        // JSON list of dtypes
inline constexpr std::string_view kSequenceNumber = "Sequence number";  // autograd node
inline constexpr std::string_view kFwdThreadId = "Fwd thread id";  // of a backward op
inline constexpr std::string_view kCallStack = "Call stack";       // "a.py(1): f;b.py(2): g"
inline constexpr std::string_view kFlops = "flops";
inline constexpr std::string_view kExternalId = "External id";  // links ops, launches, kernels
inline constexpr std::string_view kCorrelation = "correlation";  // links launches and kernels
inline constexpr std::string_view kDevice = "device";
inline constexpr std::string_view kEvIdx = "Ev Idx";
inline constexpr std::string_view kPythonId = "Python id";
// [memory] instants
inline constexpr std::string_view kTotalAllocated = "Total Allocated";
inline constexpr std::string_view kBytes = "Bytes";
inline constexpr std::string_view kAddr = "Addr";
inline constexpr std::string_view kDeviceType = "Device Type";  // 0: CPU, 1: CUDA, ...
inline constexpr std::string_view kDeviceId = "Device Id";      // -1 for the host
// flows
inline constexpr std::string_view kFlowId = "id";
inline constexpr std::string_view kBindingPoint = "bp";  // "e": bind to the enclosing slice

// --- event names ---
inline constexpr std::string_view kMemoryEvent = "[memory]";
inline constexpr std::string_view kCpuMemoryCounter = "CPU Memory";

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

}  // namespace profsh::kineto
