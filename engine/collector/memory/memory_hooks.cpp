// libprofsh_memory.so: preloaded next to the collector only when memory is profiled
// (profile_memory). It wraps the malloc family and large anonymous mmaps, calls the next
// implementation in the search order (glibc's, or a jemalloc/tcmalloc the program links), and
// reports each allocation and free to the collector, which records it on the calling thread;
// the reader attributes it to the innermost open range there.
//
// Three modes: every allocation (sizes as malloc_usable_size reports them, so that frees match),
// or only c10's CPU tensor storage (posix_memalign with 64-byte alignment, sizes as requested),
// which is what torch's profile_memory counts, or none. A Python process profiled with the torch
// activity starts in the second, so that the interpreter's own allocations (over a million while
// torch imports) are not recorded; the PyTorch operator source selects it too, for embedded
// interpreters. The collector selects none in the processes profile_memory leaves out
// (memory_scope.h: compilers and tools the workload runs), before they allocate much.
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

#include "engine/collector/runtime/raw_map.h"

// The race tests (tests/races) build these hooks into a ThreadSanitizer program, whose malloc is
// TSan's and must stay first: there the entry points are named profsh_hook_malloc and so on and
// called directly from the workload's threads, and the functions they wrap are that program's
// own (TSan's). Everything between, the part that runs inside other people's programs, is the
// same code.
#ifdef PROFSH_MEMORY_HOOKS_UNDER_TEST
#define PROFSH_HOOK(name) profsh_hook_##name
#define PROFSH_WRAPPED RTLD_DEFAULT
#else
#define PROFSH_HOOK(name) name
#define PROFSH_WRAPPED RTLD_NEXT
#endif

namespace {

using MallocFn = void* (*)(size_t);
using FreeFn = void (*)(void*);
using CallocFn = void* (*)(size_t, size_t);
using ReallocFn = void* (*)(void*, size_t);
using MemalignFn = void* (*)(size_t, size_t);
using PosixMemalignFn = int (*)(void**, size_t, size_t);
using EmitFn = void (*)(uint64_t, int64_t);

MallocFn real_malloc;
FreeFn real_free;
CallocFn real_calloc;
ReallocFn real_realloc;
MemalignFn real_memalign;
MemalignFn real_aligned_alloc;
PosixMemalignFn real_posix_memalign;
MallocFn real_valloc;
MallocFn real_pvalloc;
// 0: every allocation; 1: c10 tensor storage only; 2: none
constexpr int kModeAll = 0, kModeC10 = 1, kModeNone = 2;
std::atomic<int> g_mode{kModeAll};
bool g_ready = false;
bool g_resolving = false;
bool g_track_mmap = false;

// While dlsym resolves the real functions it may allocate: from here.
alignas(64) char g_bootstrap[1 << 16];
size_t g_bootstrap_used = 0;
bool FromBootstrap(const void* p) {
  return p >= g_bootstrap && p < g_bootstrap + sizeof g_bootstrap;
}
void* BootstrapAlloc(size_t n, size_t align = 16) {
  size_t at = (g_bootstrap_used + align - 1) & ~(align - 1);
  if (at + n > sizeof g_bootstrap) return nullptr;
  g_bootstrap_used = at + n;
  return g_bootstrap + at;
}

__thread bool t_busy __attribute__((tls_model("initial-exec"))) = false;

// Blocks whose size must be remembered (c10 storage, mmaps): a lock-free open-addressing table.
// Probes are bounded: in mode 1 every free() of the process looks here, and freed entries stay
// tombstones, so an unbounded probe would grow with the job's length. A block that finds no
// entry within the bound is not reported at all (its free could not be matched) and is counted.
constexpr uintptr_t kEmpty = 0, kTomb = 1;
constexpr size_t kSlots = 1 << 20;
constexpr size_t kProbeLimit = 64;
struct Entry {
  std::atomic<uintptr_t> key;
  std::atomic<uint64_t> size;
};
Entry* g_table = nullptr;
std::atomic<uint64_t> g_untracked{0};

size_t Slot(uintptr_t p) {
  return ((p >> 4) * 0x9e3779b97f4a7c15ull >> 40) & (kSlots - 1);
}

bool Remember(void* ptr, uint64_t size) {
  if (g_table != nullptr) {
    uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
    for (size_t i = Slot(p), n = 0; n < kProbeLimit; i = (i + 1) & (kSlots - 1), ++n) {
      uintptr_t k = g_table[i].key.load(std::memory_order_relaxed);
      if ((k == kEmpty || k == kTomb) &&
          g_table[i].key.compare_exchange_strong(k, p, std::memory_order_acq_rel)) {
        g_table[i].size.store(size, std::memory_order_release);
        return true;
      }
    }
  }
  g_untracked.fetch_add(1, std::memory_order_relaxed);
  return false;
}

bool Forget(void* ptr, uint64_t* size) {
  if (g_table == nullptr) return false;
  uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  for (size_t i = Slot(p), n = 0; n < kProbeLimit; i = (i + 1) & (kSlots - 1), ++n) {
    uintptr_t k = g_table[i].key.load(std::memory_order_acquire);
    if (k == kEmpty) return false;
    if (k == p) {
      *size = g_table[i].size.load(std::memory_order_acquire);
      return g_table[i].key.compare_exchange_strong(k, kTomb, std::memory_order_acq_rel);
    }
  }
  return false;
}

void Resolve() {
  g_resolving = true;
  real_malloc = reinterpret_cast<MallocFn>(dlsym(PROFSH_WRAPPED, "malloc"));
  real_free = reinterpret_cast<FreeFn>(dlsym(PROFSH_WRAPPED, "free"));
  real_calloc = reinterpret_cast<CallocFn>(dlsym(PROFSH_WRAPPED, "calloc"));
  real_realloc = reinterpret_cast<ReallocFn>(dlsym(PROFSH_WRAPPED, "realloc"));
  real_memalign = reinterpret_cast<MemalignFn>(dlsym(PROFSH_WRAPPED, "memalign"));
  real_aligned_alloc = reinterpret_cast<MemalignFn>(dlsym(PROFSH_WRAPPED, "aligned_alloc"));
  real_posix_memalign = reinterpret_cast<PosixMemalignFn>(dlsym(PROFSH_WRAPPED, "posix_memalign"));
  real_valloc = reinterpret_cast<MallocFn>(dlsym(PROFSH_WRAPPED, "valloc"));
  real_pvalloc = reinterpret_cast<MallocFn>(dlsym(PROFSH_WRAPPED, "pvalloc"));
  g_resolving = false;
  void* t = profsh::runtime::RawMap(kSlots * sizeof(Entry), PROT_READ | PROT_WRITE,
                                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
  if (t != MAP_FAILED) g_table = static_cast<Entry*>(t);
  g_ready = real_malloc && real_free && real_calloc && real_realloc;
  // Allocators other than glibc's (jemalloc, tcmalloc) map their arenas with mmap and then
  // hand out blocks that malloc reports: counting both would count the memory twice.
  Dl_info info;
  g_track_mmap = real_malloc && dladdr(reinterpret_cast<void*>(real_malloc), &info) &&
                 info.dli_fname && strstr(info.dli_fname, "/libc.so") != nullptr;
#ifdef PROFSH_MEMORY_HOOKS_UNDER_TEST
  g_track_mmap = true;  // TSan's allocator does not map its arenas through these hooks
#endif
}

void EnsureResolved() {
  if (!g_ready && !g_resolving) Resolve();
}

// The collector's entry point, looked up once (threads racing on the first lookup find the same
// answer). The lookup runs with t_busy set: a failing dlsym allocates its error text, which must
// not come back here.
void AbsentEmitter(uint64_t, int64_t) {}
std::atomic<EmitFn> g_emit{nullptr};

EmitFn Emitter() {
  EmitFn e = g_emit.load(std::memory_order_acquire);
  if (e == nullptr) {
    t_busy = true;
    e = reinterpret_cast<EmitFn>(dlsym(RTLD_DEFAULT, "profsh_collector_memory_event"));
    t_busy = false;
    if (e == nullptr) e = &AbsentEmitter;
    g_emit.store(e, std::memory_order_release);
  }
  return e == &AbsentEmitter ? nullptr : e;
}

// Report, unless this thread is already inside the collector or the hooks. errno is the
// program's: nothing here may change it on a call that succeeded.
void Report(void* p, int64_t bytes) {
  if (p == nullptr || t_busy) return;
  const int saved_errno = errno;
  if (EmitFn e = Emitter()) {
    t_busy = true;
    e(reinterpret_cast<uint64_t>(p), bytes);
    t_busy = false;
  }
  errno = saved_errno;
}

int Mode() {
  return g_mode.load(std::memory_order_relaxed);
}
bool All() {
  return Mode() == kModeAll;
}

// Whether a posix_memalign call comes from libc10 (its CPU allocator): other libraries (oneDNN's
// scratchpads) also align to 64 bytes, and torch does not count them. Call sites are few: the
// answer is cached per return address, packed with it in one word ((address << 1) | from_c10)
// so that threads racing on an entry never pair one address with another's answer.
std::atomic<uintptr_t> g_callers[64];

bool FromC10(void* return_address) {
  uintptr_t a = reinterpret_cast<uintptr_t>(return_address);
  std::atomic<uintptr_t>& e = g_callers[(a >> 4) & 63];
  uintptr_t cached = e.load(std::memory_order_relaxed);
  if (cached != 0 && (cached >> 1) == a) return cached & 1;
  const int saved_errno = errno;
  Dl_info info;
  bool c10 = dladdr(return_address, &info) && info.dli_fname &&
             strstr(info.dli_fname, "/libc10.") != nullptr;
  errno = saved_errno;
  e.store((a << 1) | (c10 ? 1 : 0), std::memory_order_relaxed);
  return c10;
}

void ReportAllocated(void* p) {
  if (p && All() && !t_busy) Report(p, static_cast<int64_t>(malloc_usable_size(p)));
}

}  // namespace

extern "C" {

// A switch while the program runs (the operator source does it in interpreters embedded in
// other programs) leaves the blocks allocated before it unmatched: their frees are not seen, so
// the bytes at exit include them. A python executable starts in mode 1 and never switches.
__attribute__((visibility("default"))) void profsh_memory_set_mode(int mode) {
  g_mode.store(mode);
}

// Blocks left out because the size table had no room near their address (the collector reports
// the count in the session's notices).
__attribute__((visibility("default"))) uint64_t profsh_memory_untracked(void) {
  return g_untracked.load(std::memory_order_relaxed);
}

__attribute__((visibility("default"))) void* PROFSH_HOOK(malloc)(size_t n) {
  EnsureResolved();
  if (!g_ready) return BootstrapAlloc(n);
  void* p = real_malloc(n);
  ReportAllocated(p);
  return p;
}

__attribute__((visibility("default"))) void PROFSH_HOOK(free)(void* p) {
  if (p == nullptr || FromBootstrap(p)) return;
  EnsureResolved();
  if (!t_busy && Mode() != kModeNone) {
    uint64_t size;
    if (All()) {
      Report(p, -static_cast<int64_t>(malloc_usable_size(p)));
    } else if (Forget(p, &size)) {
      Report(p, -static_cast<int64_t>(size));
    }
  }
  if (real_free) real_free(p);
}

__attribute__((visibility("default"))) void* PROFSH_HOOK(calloc)(size_t n, size_t size) {
  EnsureResolved();
  if (!g_ready) {
    if (size && n > SIZE_MAX / size) return nullptr;
    void* p = BootstrapAlloc(n * size);
    if (p) memset(p, 0, n * size);
    return p;
  }
  void* p = real_calloc(n, size);
  ReportAllocated(p);
  return p;
}

__attribute__((visibility("default"))) void* PROFSH_HOOK(realloc)(void* old, size_t n) {
  EnsureResolved();
  if (FromBootstrap(old) || !g_ready) {
    // A block from the start-up buffer moves to the real allocator.
    void* p = g_ready ? real_malloc(n) : BootstrapAlloc(n);
    if (p && old) {
      size_t left = static_cast<size_t>(g_bootstrap + sizeof g_bootstrap - static_cast<char*>(old));
      memcpy(p, old, n < left ? n : left);
    }
    ReportAllocated(g_ready ? p : nullptr);
    return p;
  }
  int64_t before = old && All() && !t_busy ? static_cast<int64_t>(malloc_usable_size(old)) : 0;
  void* p = real_realloc(old, n);
  if (All() && !t_busy) {
    // glibc's realloc(old, 0) frees old and returns null; any other null leaves old alone.
    if (old && (p != nullptr || n == 0)) Report(old, -before);
    if (p) Report(p, static_cast<int64_t>(malloc_usable_size(p)));
  }
  return p;
}

__attribute__((visibility("default"))) int PROFSH_HOOK(posix_memalign)(void** out, size_t align,
                                                                       size_t n) {
  EnsureResolved();
  if (!g_ready || real_posix_memalign == nullptr) {
    void* p = BootstrapAlloc(n, align < 16 ? 16 : align);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
  }
  int r = real_posix_memalign(out, align, n);
  if (r == 0 && !t_busy) {
    if (All()) {
      Report(*out, static_cast<int64_t>(malloc_usable_size(*out)));
    } else if (Mode() == kModeC10 && align == 64 && FromC10(__builtin_return_address(0))) {
      // c10's CPU allocator: the size it asked for is the size torch reports.
      if (Remember(*out, n)) Report(*out, static_cast<int64_t>(n));
    }
  }
  return r;
}

__attribute__((visibility("default"))) void* PROFSH_HOOK(aligned_alloc)(size_t align, size_t n) {
  EnsureResolved();
  if (!g_ready || real_aligned_alloc == nullptr) return BootstrapAlloc(n, align < 16 ? 16 : align);
  void* p = real_aligned_alloc(align, n);
  ReportAllocated(p);
  return p;
}

__attribute__((visibility("default"))) void* PROFSH_HOOK(memalign)(size_t align, size_t n) {
  EnsureResolved();
  if (!g_ready || real_memalign == nullptr) return BootstrapAlloc(n, align < 16 ? 16 : align);
  void* p = real_memalign(align, n);
  ReportAllocated(p);
  return p;
}

__attribute__((visibility("default"))) void* PROFSH_HOOK(valloc)(size_t n) {
  EnsureResolved();
  if (!g_ready || real_valloc == nullptr) return BootstrapAlloc(n, 4096);
  void* p = real_valloc(n);
  ReportAllocated(p);
  return p;
}

__attribute__((visibility("default"))) void* PROFSH_HOOK(pvalloc)(size_t n) {
  EnsureResolved();
  if (!g_ready || real_pvalloc == nullptr) return BootstrapAlloc((n + 4095) & ~size_t{4095}, 4096);
  void* p = real_pvalloc(n);
  ReportAllocated(p);
  return p;
}

// Large anonymous mappings that programs make themselves are memory too (glibc's malloc maps its
// large blocks without going through this symbol; other allocators' arenas are left out, see
// Resolve). Smaller ones are left to the allocators.
__attribute__((visibility("default"))) void* PROFSH_HOOK(mmap)(void* addr, size_t length, int prot,
                                                               int flags, int fd, off_t off) {
  // syscall() returns -1 and sets errno on failure, as mmap does.
  void* p = reinterpret_cast<void*>(syscall(SYS_mmap, addr, length, prot, flags, fd, off));
  if (p == MAP_FAILED) return MAP_FAILED;
  if ((flags & MAP_ANONYMOUS) && length >= (1u << 20) && !t_busy && g_ready && g_track_mmap &&
      All() && Remember(p, length)) {
    Report(p, static_cast<int64_t>(length));
  }
  return p;
}

__attribute__((visibility("default"))) void* PROFSH_HOOK(mmap64)(void* addr, size_t length,
                                                                 int prot, int flags, int fd,
                                                                 off_t off) {
  return PROFSH_HOOK(mmap)(addr, length, prot, flags, fd, off);
}

__attribute__((visibility("default"))) int PROFSH_HOOK(munmap)(void* addr, size_t length) {
  uint64_t size;
  if (!t_busy && g_ready && length >= (1u << 20) && Mode() != kModeNone && Forget(addr, &size))
    Report(addr, -static_cast<int64_t>(size));
  return static_cast<int>(syscall(SYS_munmap, addr, length));
}

}  // extern "C"

namespace {
bool IsPythonProcess() {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return false;
  exe[n] = 0;
  const char* base = strrchr(exe, '/');
  return strncmp(base ? base + 1 : exe, "python", 6) == 0;
}

__attribute__((constructor)) void ProfshMemoryLoad() {
  EnsureResolved();
  const char* plugin = getenv("PROFSH_TORCH_PLUGIN");
  // Unless the collector already left this process out.
  int all = kModeAll;
  if (plugin && *plugin && IsPythonProcess()) g_mode.compare_exchange_strong(all, kModeC10);
}
}  // namespace
