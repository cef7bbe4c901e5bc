// The GPU activity records of a kGpuActivity block, each declared once. A record's field list
// below makes its named struct, its wire order and its field count; the collector fills the
// struct, the codec writes its fields in list order as varints, and the host reads them back by
// name. A new field is one line at the end of its list: a reader of an older stream sees it as 0,
// and an older reader ignores it.
//
// Header-only, no exceptions, no allocation: the injected runtime includes it.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

#include "engine/stream/stream_codec.h"

namespace profsh::stream {

// The fields device work (a kernel, copy or set) starts with, in this order. Times are the
// collector's ticks.
#define PROFSH_GPU_WORK_FIELDS(F) \
  F(start)                        \
  F(end)                          \
  F(device)                       \
  F(context)                      \
  F(stream)                       \
  F(correlation)

// A kernel (CUPTI_ACTIVITY_KIND_KERNEL / CONCURRENT_KERNEL).
#define PROFSH_GPU_KERNEL_FIELDS(F)       \
  PROFSH_GPU_WORK_FIELDS(F)               \
  F(name) /* a string id (StringBlock) */ \
  F(grid_x)                               \
  F(grid_y)                               \
  F(grid_z)                               \
  F(block_x)                              \
  F(block_y)                              \
  F(block_z)                              \
  F(registers_per_thread)                 \
  F(static_shared)                        \
  F(dynamic_shared)                       \
  F(graph)                                \
  F(graph_node)

// A copy (MEMCPY, and MEMCPY2 for peer copies). copy_kind, src_kind and dst_kind are CUPTI's
// enums; src_device and dst_device equal device but for peer copies.
#define PROFSH_GPU_MEMCPY_FIELDS(F) \
  PROFSH_GPU_WORK_FIELDS(F)         \
  F(bytes)                          \
  F(copy_kind)                      \
  F(src_kind)                       \
  F(dst_kind)                       \
  F(src_device)                     \
  F(dst_device)                     \
  F(graph)

#define PROFSH_GPU_MEMSET_FIELDS(F) \
  PROFSH_GPU_WORK_FIELDS(F)         \
  F(bytes)                          \
  F(value)                          \
  F(memory_kind)

// A driver or runtime call. tid is the OS thread; api is kGpuApiDriver or kGpuApiRuntime.
#define PROFSH_GPU_API_FIELDS(F) \
  F(start)                       \
  F(end)                         \
  F(tid)                         \
  F(correlation)                 \
  F(name) /* a string id */      \
  F(cbid)                        \
  F(api)                         \
  F(return_value)

// A synchronisation (CUPTI's type: 1 event, 2 stream wait event, 3 stream, 4 context).
#define PROFSH_GPU_SYNC_FIELDS(F) \
  F(start)                        \
  F(end)                          \
  F(context)                      \
  F(stream)                       \
  F(correlation)                  \
  F(type)                         \
  F(event)

// An allocation or free of device memory (operation 1: alloc, 2: free).
#define PROFSH_GPU_MEMORY_FIELDS(F) \
  F(time)                           \
  F(device)                         \
  F(context)                        \
  F(stream)                         \
  F(correlation)                    \
  F(operation)                      \
  F(memory_kind)                    \
  F(address)                        \
  F(bytes)

// CUPTI's own work. thread is the OS thread when object_kind is CUPTI's thread object, else 0.
#define PROFSH_GPU_OVERHEAD_FIELDS(F) \
  F(start)                            \
  F(end)                              \
  F(overhead_kind)                    \
  F(object_kind)                      \
  F(thread)

#define PROFSH_GPU_DEVICE_FIELDS(F) \
  F(id)                             \
  F(name) /* a string id */         \
  F(sms)                            \
  F(cc_major)                       \
  F(cc_minor)                       \
  F(global_memory)                  \
  F(max_warps_per_sm)               \
  F(max_blocks_per_sm)              \
  F(registers_per_sm)               \
  F(shared_memory_per_sm)           \
  F(max_threads_per_block)

#define PROFSH_GPU_CONTEXT_FIELDS(F) \
  F(context)                         \
  F(device)                          \
  F(null_stream)

// Cumulative counts of the process's CUPTI client.
#define PROFSH_GPU_DROPS_FIELDS(F)                                                   \
  F(cupti_dropped)   /* records CUPTI dropped */                                     \
  F(buffers_refused) /* buffers CUPTI asked for while the pool was empty */          \
  F(kinds_ignored)   /* records of kinds not kept */                                 \
  F(untimed)         /* device records without valid times (unknown, end < start) */ \
  F(unwritten)       /* records not written (no memory) */

// A CUDA event recorded on a stream (CUPTI_ACTIVITY_KIND_CUDA_EVENT). Not shown as an event:
// it tells an Event Sync or Stream Wait Event which cudaEventRecord (its correlation) and
// stream it waits for, as Kineto's wait_on_* arguments do.
#define PROFSH_GPU_CUDA_EVENT_FIELDS(F) \
  F(context)                            \
  F(stream)                             \
  F(correlation)                        \
  F(event)                              \
  F(device)

// Every record: its struct, its kind (the number on the wire, never reused) and its field list.
#define PROFSH_GPU_RECORDS(R)                                 \
  R(GpuKernel, kGpuKernel, 1, PROFSH_GPU_KERNEL_FIELDS)       \
  R(GpuMemcpy, kGpuMemcpy, 2, PROFSH_GPU_MEMCPY_FIELDS)       \
  R(GpuMemset, kGpuMemset, 3, PROFSH_GPU_MEMSET_FIELDS)       \
  R(GpuApi, kGpuApi, 4, PROFSH_GPU_API_FIELDS)                \
  R(GpuSync, kGpuSync, 5, PROFSH_GPU_SYNC_FIELDS)             \
  R(GpuMemory, kGpuMemory, 6, PROFSH_GPU_MEMORY_FIELDS)       \
  R(GpuOverhead, kGpuOverhead, 7, PROFSH_GPU_OVERHEAD_FIELDS) \
  R(GpuDevice, kGpuDevice, 8, PROFSH_GPU_DEVICE_FIELDS)       \
  R(GpuContext, kGpuContext, 9, PROFSH_GPU_CONTEXT_FIELDS)    \
  R(GpuDrops, kGpuDrops, 10, PROFSH_GPU_DROPS_FIELDS)         \
  R(GpuCudaEvent, kGpuCudaEvent, 11, PROFSH_GPU_CUDA_EVENT_FIELDS)

#define PROFSH_GPU_KIND_ENUMERATOR(Type, kind, number, FIELDS) kind = number,
enum GpuRecordKind : uint8_t { PROFSH_GPU_RECORDS(PROFSH_GPU_KIND_ENUMERATOR) };
#undef PROFSH_GPU_KIND_ENUMERATOR

#define PROFSH_GPU_FIELD_MEMBER(field) uint64_t field = 0;
#define PROFSH_GPU_FIELD_COUNT(field) +1
#define PROFSH_GPU_FIELD_NAME(field) #field,
#define PROFSH_GPU_FIELD_PACK(field) r->f[r->count++] = field;
#define PROFSH_GPU_FIELD_UNPACK(field) out.field = r[i++];

#define PROFSH_GPU_DECLARE_RECORD(Type, kind_value, number, FIELDS)                           \
  struct Type {                                                                               \
    static constexpr GpuRecordKind kKind = kind_value;                                        \
    static constexpr std::string_view kName = #Type;                                          \
    static constexpr uint32_t kFields = 0 FIELDS(PROFSH_GPU_FIELD_COUNT);                     \
    static constexpr std::string_view kFieldNames[kFields] = {FIELDS(PROFSH_GPU_FIELD_NAME)}; \
    FIELDS(PROFSH_GPU_FIELD_MEMBER)                                                           \
                                                                                              \
    void PackInto(GpuRecord* r) const {                                                       \
      r->kind = kKind;                                                                        \
      r->count = 0;                                                                           \
      FIELDS(PROFSH_GPU_FIELD_PACK)                                                           \
    }                                                                                         \
    /* Fields the writer did not have read as 0. */                                           \
    static Type From(const GpuRecord& r) {                                                    \
      Type out;                                                                               \
      uint32_t i = 0;                                                                         \
      FIELDS(PROFSH_GPU_FIELD_UNPACK)                                                         \
      return out;                                                                             \
    }                                                                                         \
  };                                                                                          \
  static_assert(Type::kFields <= GpuRecord::kMaxFields);

PROFSH_GPU_RECORDS(PROFSH_GPU_DECLARE_RECORD)

#undef PROFSH_GPU_DECLARE_RECORD
#undef PROFSH_GPU_FIELD_UNPACK
#undef PROFSH_GPU_FIELD_PACK
#undef PROFSH_GPU_FIELD_NAME
#undef PROFSH_GPU_FIELD_COUNT
#undef PROFSH_GPU_FIELD_MEMBER

// Calls `visit(record)` with the record as its named struct; false for a kind this reader does
// not know (a newer writer's), which is then skipped.
template <typename Visit>
bool VisitGpuRecord(const GpuRecord& r, Visit&& visit) {
  switch (r.kind) {
#define PROFSH_GPU_VISIT_CASE(Type, kind_value, number, FIELDS) \
  case kind_value:                                              \
    visit(Type::From(r));                                       \
    return true;
    PROFSH_GPU_RECORDS(PROFSH_GPU_VISIT_CASE)
#undef PROFSH_GPU_VISIT_CASE
    default:
      return false;
  }
}

// Questions every reader asks of any record, answered from the field names, so that a new kind
// with a `correlation` or `start` field is understood without a change here.
template <typename T>
concept CorrelatedGpuRecord = requires(const T& t) {
  t.correlation;
};
template <typename T>
concept SpanGpuRecord = requires(const T& t) {
  t.start;
  t.end;
};
// Device work: what runs on a stream of a device for a launch.
template <typename T>
concept DeviceWorkGpuRecord = SpanGpuRecord<T> && CorrelatedGpuRecord<T> && requires(const T& t) {
  t.device;
  t.stream;
};

// The correlation id linking a record to its launch call; 0 for kinds that have none.
inline uint64_t CorrelationOf(const GpuRecord& r) {
  uint64_t id = 0;
  VisitGpuRecord(r, [&](const auto& rec) {
    if constexpr (CorrelatedGpuRecord<std::decay_t<decltype(rec)>>) id = rec.correlation;
  });
  return id;
}

// Whether the record is device work (a kernel, copy or set).
inline bool IsDeviceWork(uint8_t kind) {
  switch (kind) {
#define PROFSH_GPU_WORK_CASE(Type, kind_value, number, FIELDS) \
  case kind_value:                                             \
    return DeviceWorkGpuRecord<Type>;
    PROFSH_GPU_RECORDS(PROFSH_GPU_WORK_CASE)
#undef PROFSH_GPU_WORK_CASE
    default:
      return false;
  }
}

}  // namespace profsh::stream
