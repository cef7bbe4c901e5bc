// The parts of Intel ITT's binary interface a collector sees (ittapi's ittnotify_config.h and
// ittnotify.h, 64-bit Linux): the static part in the application hands __itt_api_init its
// global structure, whose api list the collector fills with its own functions. Declared here
// from the documented layout so that profsh needs no ittapi headers.
#pragma once

#include <pthread.h>

#include <cstdint>

#include "engine/collector/runtime/registry.h"
#include "engine/collector/runtime/string_table.h"

namespace profsh::runtime::itt {

struct Id {
  unsigned long long d1, d2, d3;
};

struct ApiInfo {
  const char* name;  // "__itt_task_begin", ...
  void** func_ptr;   // the application's function pointer for it
  void* init_func;
  void* null_func;  // what to install for a function the collector does not provide
  int group;
};

struct ThreadInfo {
  const char* nameA;
  void* nameW;
  pthread_t tid;
  int state;
  int extra1;
  void* extra2;
  ThreadInfo* next;
};

#pragma pack(push, 8)
struct Global {
  unsigned char magic[8];
  unsigned long version_major;
  unsigned long version_minor;
  unsigned long version_build;
  volatile long api_initialized;
  volatile long mutex_initialized;
  volatile long atomic_counter;
  pthread_mutex_t mutex;
  void* lib;
  void* error_handler;
  const char** dll_path_ptr;
  ApiInfo* api_list_ptr;
  Global* next;
  ThreadInfo* thread_list;
  IttDomainAbi* domain_list;
  IttStringHandleAbi* string_list;
  int state;
  IttCounterAbi* counter_list;
  // Later versions append more lists; we read none of them.
};
#pragma pack(pop)

// __itt_metadata_type, which counters use for their value type.
enum MetadataType { kUnknown = 0, kU64, kS64, kU32, kS32, kU16, kS16, kFloat, kDouble };

}  // namespace profsh::runtime::itt
