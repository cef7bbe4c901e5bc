#include "engine/collector/runtime/torch_api.h"

#include <string.h>

#include "engine/collector/runtime/registry.h"
#include "engine/collector/runtime/runtime.h"
#include "engine/collector/runtime/steps.h"

using namespace profsh::runtime;
namespace stream = profsh::stream;

extern "C" {

__attribute__((visibility("default"))) uint32_t profsh_collector_intern(const char* text,
                                                                        size_t length) {
  if (!g.active) return 0;
  return registry().strings().InternTagged(text ? text : "", text ? length : 0);
}

__attribute__((visibility("default"))) const volatile uint8_t* profsh_collector_off_flag(void) {
  static const volatile uint8_t always_off = 1;
  if (!g.active) return &always_off;
  return reinterpret_cast<const volatile uint8_t*>(&g.off);
}

__attribute__((visibility("default"))) void profsh_collector_count_name(uint32_t name) {
  if (!(name & kTagMask)) CountNameBeforeFirstStep(name);
}

__attribute__((visibility("default"))) void profsh_collector_op_begin(
    uint32_t name, const struct profsh_op_info* info) {
  ThreadSlot* s = CurrentSlot();
  if (s == nullptr || info == nullptr) return;
  const uint32_t level = s->depth++;
  if (__builtin_expect(name & kTagMask, 0)) name = OnTaggedName(s, name, level);
  Record* r = ReserveLevel(s, level, 3);
  if (r == nullptr) return;
  if (LevelSkipped(s, level)) SetLevelSkipped(s, level, false);
  *r = Record{Now(), stream::kOpBegin, info->scope, 0, name};
  WriteExt(s, 1,
           RecordExt{info->shapes & kIdMask, info->dtypes & kIdMask,
                     static_cast<uint64_t>(info->sequence)});
  WriteExt(
      s, 2,
      RecordExt{info->stack & kIdMask, static_cast<uint32_t>(info->forward_thread), info->flops});
  Commit(s, 3);
}

__attribute__((visibility("default"))) void profsh_collector_op_end(void) {
  EmitPop(stream::kPop, 0);
}

// One allocation (bytes > 0) or free (bytes < 0) at `address`, from libprofsh_memory.so. The
// drain thread's own allocations are not the workload's: they are not recorded.
__attribute__((visibility("default"))) void profsh_collector_memory_event(uint64_t address,
                                                                          int64_t bytes) {
  if (!g.active || t_is_drain_thread) return;
  RecordExt ext{static_cast<uint32_t>(address >> 32), static_cast<uint32_t>(address),
                static_cast<uint64_t>(bytes)};
  EmitSimple(stream::kMemory, 0, 0, 0, &ext);
}

namespace {
// Created on first use (a lock then), the same id afterwards: a local static's guard is one load.
uint16_t PythonCallsDomain() {
  static const uint16_t domain =
      registry().Domain(registry().strings().Intern(stream::kPythonCallsDomain,
                                                    sizeof stream::kPythonCallsDomain - 1),
                        stream::kSourceNvtx);
  return domain;
}
}  // namespace

__attribute__((visibility("default"))) void profsh_collector_python_call(uint32_t name) {
  if (!g.active) return;
  EmitPush(stream::kPush, 0, PythonCallsDomain(), name, nullptr);
}

__attribute__((visibility("default"))) void profsh_collector_python_return(void) {
  if (!g.active) return;
  EmitPop(stream::kPop, PythonCallsDomain());
}

}  // extern "C"
