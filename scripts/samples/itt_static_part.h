// A minimal ITT "static part", the code ittnotify links into every application, written from
// the loading protocol (ittapi's ittnotify_static.c), so that the collector's tests and the ITT
// sample run against a client that behaves like PyTorch's or oneDNN's without needing ittapi:
//   - every API is a function pointer that starts at an init stub;
//   - domain and string-handle creation before the collector is loaded allocate objects in the
//     static part's own lists (flags = 1), which the application keeps using afterwards;
//   - the first other call loads $INTEL_LIBITTNOTIFY64 and, since it exports __itt_api_init,
//     hands it the global structure to fill the pointers; without the variable, or if loading
//     fails, every pointer becomes its null function.
// StaticPart<N> instances are independent, like the static parts of two shared objects.
#pragma once

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cstdint>

namespace itt_client {

struct Domain {
  volatile int flags;
  const char* nameA;
  void* nameW;
  int extra1;
  void* extra2;
  Domain* next;
};
struct StringHandle {
  const char* strA;
  void* strW;
  int extra1;
  void* extra2;
  StringHandle* next;
};
struct Id {
  unsigned long long d1, d2, d3;
};
struct CounterInfo {
  const char* nameA;
  void* nameW;
  const char* domainA;
  void* domainW;
  int type;
  long index;
  int extra1;
  void* extra2;
  CounterInfo* next;
};
using Counter = CounterInfo*;

struct ApiInfo {
  const char* name;
  void** func_ptr;
  void* init_func;
  void* null_func;
  int group;
};
struct ThreadInfo;
#pragma pack(push, 8)
struct Global {
  unsigned char magic[8];
  unsigned long version_major, version_minor, version_build;
  volatile long api_initialized, mutex_initialized, atomic_counter;
  pthread_mutex_t mutex;
  void* lib;
  void* error_handler;
  const char** dll_path_ptr;
  ApiInfo* api_list_ptr;
  Global* next;
  ThreadInfo* thread_list;
  Domain* domain_list;
  StringHandle* string_list;
  int state;
  CounterInfo* counter_list;
  unsigned int ipt_collect_events;
  void* histogram_list;
  void* counter_metadata_list;
};
#pragma pack(pop)

enum { kMetaU64 = 1, kMetaS64, kMetaU32, kMetaS32, kMetaU16, kMetaS16, kMetaFloat, kMetaDouble };

template <int N>
struct StaticPart {
  using DomainCreateFn = Domain* (*)(const char*);
  using StringHandleCreateFn = StringHandle* (*)(const char*);
  using TaskBeginFn = void (*)(const Domain*, Id, Id, StringHandle*);
  using TaskBeginFnFn = void (*)(const Domain*, Id, Id, void*);
  using TaskEndFn = void (*)(const Domain*);
  using FrameFn = void (*)(const Domain*, Id*);
  using MarkerFn = void (*)(const Domain*, Id, StringHandle*, int);
  using ThreadSetNameFn = void (*)(const char*);
  using CounterCreateFn = Counter (*)(const char*, const char*);
  using CounterCreateTypedFn = Counter (*)(const char*, const char*, int);
  using CounterSetFn = void (*)(Counter, void*);
  using CounterIncFn = void (*)(Counter);
  using CounterDeltaFn = void (*)(Counter, unsigned long long);
  using VoidFn = void (*)();

  static inline Global global{};
  static inline bool loaded = false;
  static inline DomainCreateFn domain_create;
  static inline StringHandleCreateFn string_handle_create;
  static inline TaskBeginFn task_begin;
  static inline TaskBeginFnFn task_begin_fn;
  static inline TaskEndFn task_end;
  static inline FrameFn frame_begin_v3, frame_end_v3;
  static inline MarkerFn marker;
  static inline ThreadSetNameFn thread_set_name;
  static inline CounterCreateFn counter_create;
  static inline CounterCreateTypedFn counter_create_typed;
  static inline CounterSetFn counter_set_value;
  static inline CounterIncFn counter_inc, counter_dec;
  static inline CounterDeltaFn counter_inc_delta;
  static inline VoidFn pause, resume;

  // The static implementations: objects in the static part's own lists.
  static Domain* StaticDomainCreate(const char* name) {
    pthread_mutex_lock(&global.mutex);
    Domain* d = global.domain_list;
    for (; d; d = d->next) {
      if (strcmp(d->nameA, name) == 0) break;
    }
    if (!d) {
      d = new Domain{getenv("INTEL_LIBITTNOTIFY64") ? 1 : 0,
                     strdup(name),
                     nullptr,
                     0,
                     nullptr,
                     global.domain_list};
      global.domain_list = d;
    }
    pthread_mutex_unlock(&global.mutex);
    return d;
  }
  static StringHandle* StaticStringHandleCreate(const char* name) {
    pthread_mutex_lock(&global.mutex);
    StringHandle* h = global.string_list;
    for (; h; h = h->next) {
      if (strcmp(h->strA, name) == 0) break;
    }
    if (!h) {
      h = new StringHandle{strdup(name), nullptr, 0, nullptr, global.string_list};
      global.string_list = h;
    }
    pthread_mutex_unlock(&global.mutex);
    return h;
  }
  static Counter StaticCounterCreateTyped(const char* name, const char* domain, int type) {
    pthread_mutex_lock(&global.mutex);
    auto* c = new CounterInfo{strdup(name),
                              nullptr,
                              domain ? strdup(domain) : nullptr,
                              nullptr,
                              type,
                              0,
                              0,
                              nullptr,
                              global.counter_list};
    global.counter_list = c;
    pthread_mutex_unlock(&global.mutex);
    return c;
  }
  static Counter StaticCounterCreate(const char* name, const char* domain) {
    return StaticCounterCreateTyped(name, domain, kMetaU64);
  }
  static void StaticThreadSetName(const char*) {}
  static void StaticPause() {}
  static void StaticResume() {}

  // Init stubs for the functions without a static implementation: load, then call through.
  static void TaskBeginInit(const Domain* d, Id id, Id parent, StringHandle* name) {
    Load();
    if (task_begin && task_begin != TaskBeginInit) task_begin(d, id, parent, name);
  }
  static void TaskBeginFnInit(const Domain* d, Id id, Id parent, void* fn) {
    Load();
    if (task_begin_fn && task_begin_fn != TaskBeginFnInit) task_begin_fn(d, id, parent, fn);
  }
  static void TaskEndInit(const Domain* d) {
    Load();
    if (task_end && task_end != TaskEndInit) task_end(d);
  }
  static void FrameBeginInit(const Domain* d, Id* id) {
    Load();
    if (frame_begin_v3 && frame_begin_v3 != FrameBeginInit) frame_begin_v3(d, id);
  }
  static void FrameEndInit(const Domain* d, Id* id) {
    Load();
    if (frame_end_v3 && frame_end_v3 != FrameEndInit) frame_end_v3(d, id);
  }
  static void MarkerInit(const Domain* d, Id id, StringHandle* name, int scope) {
    Load();
    if (marker && marker != MarkerInit) marker(d, id, name, scope);
  }
  static void CounterSetInit(Counter c, void* v) {
    Load();
    if (counter_set_value && counter_set_value != CounterSetInit) counter_set_value(c, v);
  }
  static void CounterIncInit(Counter c) {
    Load();
    if (counter_inc && counter_inc != CounterIncInit) counter_inc(c);
  }
  static void CounterDecInit(Counter c) {
    Load();
    if (counter_dec && counter_dec != CounterDecInit) counter_dec(c);
  }
  static void CounterIncDeltaInit(Counter c, unsigned long long v) {
    Load();
    if (counter_inc_delta && counter_inc_delta != CounterIncDeltaInit) counter_inc_delta(c, v);
  }

  static inline ApiInfo api_list[] = {
      {"__itt_domain_create", reinterpret_cast<void**>(&domain_create),
       reinterpret_cast<void*>(StaticDomainCreate), reinterpret_cast<void*>(StaticDomainCreate), 1},
      {"__itt_string_handle_create", reinterpret_cast<void**>(&string_handle_create),
       reinterpret_cast<void*>(StaticStringHandleCreate),
       reinterpret_cast<void*>(StaticStringHandleCreate), 1},
      {"__itt_task_begin", reinterpret_cast<void**>(&task_begin),
       reinterpret_cast<void*>(TaskBeginInit), nullptr, 1},
      {"__itt_task_begin_fn", reinterpret_cast<void**>(&task_begin_fn),
       reinterpret_cast<void*>(TaskBeginFnInit), nullptr, 1},
      {"__itt_task_end", reinterpret_cast<void**>(&task_end), reinterpret_cast<void*>(TaskEndInit),
       nullptr, 1},
      {"__itt_frame_begin_v3", reinterpret_cast<void**>(&frame_begin_v3),
       reinterpret_cast<void*>(FrameBeginInit), nullptr, 1},
      {"__itt_frame_end_v3", reinterpret_cast<void**>(&frame_end_v3),
       reinterpret_cast<void*>(FrameEndInit), nullptr, 1},
      {"__itt_marker", reinterpret_cast<void**>(&marker), reinterpret_cast<void*>(MarkerInit),
       nullptr, 1},
      {"__itt_thread_set_name", reinterpret_cast<void**>(&thread_set_name),
       reinterpret_cast<void*>(StaticThreadSetName), reinterpret_cast<void*>(StaticThreadSetName),
       1},
      {"__itt_counter_create", reinterpret_cast<void**>(&counter_create),
       reinterpret_cast<void*>(StaticCounterCreate), reinterpret_cast<void*>(StaticCounterCreate),
       1},
      {"__itt_counter_create_typed", reinterpret_cast<void**>(&counter_create_typed),
       reinterpret_cast<void*>(StaticCounterCreateTyped),
       reinterpret_cast<void*>(StaticCounterCreateTyped), 1},
      {"__itt_counter_set_value", reinterpret_cast<void**>(&counter_set_value),
       reinterpret_cast<void*>(CounterSetInit), nullptr, 1},
      {"__itt_counter_inc", reinterpret_cast<void**>(&counter_inc),
       reinterpret_cast<void*>(CounterIncInit), nullptr, 1},
      {"__itt_counter_dec", reinterpret_cast<void**>(&counter_dec),
       reinterpret_cast<void*>(CounterDecInit), nullptr, 1},
      {"__itt_counter_inc_delta", reinterpret_cast<void**>(&counter_inc_delta),
       reinterpret_cast<void*>(CounterIncDeltaInit), nullptr, 1},
      {"__itt_pause", reinterpret_cast<void**>(&pause), reinterpret_cast<void*>(StaticPause),
       reinterpret_cast<void*>(StaticPause), 1},
      {"__itt_resume", reinterpret_cast<void**>(&resume), reinterpret_cast<void*>(StaticResume),
       reinterpret_cast<void*>(StaticResume), 1},
      {nullptr, nullptr, nullptr, nullptr, 0},
  };

  static void Setup() {
    static const unsigned char kMagic[8] = {0xED, 0xAB, 0xAB, 0xEC, 0x0D, 0xEE, 0xDA, 0x30};
    memcpy(global.magic, kMagic, 8);
    global.version_major = 3;
    pthread_mutex_init(&global.mutex, nullptr);
    global.api_list_ptr = api_list;
    for (ApiInfo* a = api_list; a->name; ++a) *a->func_ptr = a->init_func;
  }

  static void Load() {
    pthread_mutex_lock(&global.mutex);
    if (!loaded) {
      loaded = true;
      const char* path = getenv("INTEL_LIBITTNOTIFY64");
      void* lib = path ? dlopen(path, RTLD_LAZY) : nullptr;
      using ApiInit = void (*)(Global*, int);
      auto init = lib ? reinterpret_cast<ApiInit>(dlsym(lib, "__itt_api_init")) : nullptr;
      pthread_mutex_unlock(&global.mutex);
      if (init) {
        global.lib = lib;
        global.api_initialized = 1;
        init(&global, 0xffffffff);  // the collector fills every pointer
      } else {
        for (ApiInfo* a = api_list; a->name; ++a) *a->func_ptr = a->null_func;
      }
      return;
    }
    pthread_mutex_unlock(&global.mutex);
  }
};

}  // namespace itt_client
