// Workloads for the collector's end-to-end tests: each mode emits NVTX events whose exact
// counts the test knows. Built against the NVTX v3 headers only, like any program that uses
// NVTX; without profsh attached every call is a no-op.
//
//   nvtx_workload MODE [ARGS...]
#include <nvtx3/nvToolsExt.h>

#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "include/profsh.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

long Arg(int argc, char** argv, int i, long fallback) {
  return argc > i ? std::atol(argv[i]) : fallback;
}

void Spin(int iterations) {
  volatile double x = 1;
  for (int i = 0; i < iterations; ++i) x = x * 1.0000001 + 1e-9;
}

// T threads, each N times: outer { 3 × inner }.
int Nested(int threads, int n) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([n] {
      for (int i = 0; i < n; ++i) {
        nvtxRangePushA("outer");
        for (int j = 0; j < 3; ++j) {
          nvtxRangePushA("inner");
          Spin(200);
          nvtxRangePop();
        }
        nvtxRangePop();
      }
    });
  }
  for (auto& t : pool) t.join();
  return 0;
}

// The parent records "parent" ranges, a forked child "child" ranges, and a second child runs a
// shell script that execs this program in nested mode (the exec'd image is the same pid).
int Processes(const char* self, const char* script) {
  for (int i = 0; i < 10; ++i) {
    nvtxRangePushA("parent");
    nvtxRangePop();
  }
  pid_t child = fork();
  if (child == 0) {
    for (int i = 0; i < 20; ++i) {
      nvtxRangePushA("child");
      nvtxRangePop();
    }
    std::exit(0);  // exit: atexit and destructors run
  }
  pid_t quick = fork();
  if (quick == 0) {
    for (int i = 0; i < 5; ++i) {
      nvtxRangePushA("quick child");
      nvtxRangePop();
    }
    _exit(0);  // _exit: only the wrapper can flush
  }
  pid_t shell = fork();
  if (shell == 0) {
    execl("/bin/sh", "sh", script, self, static_cast<char*>(nullptr));
    _exit(127);
  }
  int status;
  waitpid(child, &status, 0);
  waitpid(quick, &status, 0);
  waitpid(shell, &status, 0);
  for (int i = 0; i < 10; ++i) {
    nvtxRangePushA("parent");
    nvtxRangePop();
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// Ranges started on one thread and ended on another, overlapping.
int StartEnd() {
  std::vector<nvtxRangeId_t> ids(8);
  std::thread starter([&] {
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = nvtxRangeStartA("handoff");
  });
  starter.join();
  std::thread ender([&] {
    for (nvtxRangeId_t id : ids) {
      Spin(1000);
      nvtxRangeEnd(id);
    }
  });
  ender.join();
  return 0;
}

// ASCII with UTF-8 text, wide strings, registered strings, domains, categories, colors and
// every payload type.
int Attributes() {
  // "données χρόνος 学习 🚀" in UTF-8, spelled in bytes so that no compiler setting changes it.
  nvtxRangePushA(
      "donn\xc3\xa9"
      "es \xcf\x87\xcf\x81\xcf\x8c\xce\xbd\xce\xbf\xcf\x82 \xe5\xad\xa6\xe4\xb9\xa0 "
      "\xf0\x9f\x9a\x80");
  nvtxRangePop();
  nvtxRangePushW(L"wide ñ 走");
  nvtxRangePop();
  nvtxMarkW(L"wide mark ✓");
  nvtxNameCategoryA(7, "io");
  nvtxDomainHandle_t domain = nvtxDomainCreateA("my domain");
  nvtxDomainHandle_t same = nvtxDomainCreateA("my domain");
  if (same != domain) return 3;
  nvtxDomainNameCategoryA(domain, 1, "compute");
  nvtxStringHandle_t reg = nvtxDomainRegisterStringA(domain, "registered step");
  struct {
    nvtxPayloadType_t type;
    const char* name;
  } payloads[] = {
      {NVTX_PAYLOAD_TYPE_UNSIGNED_INT64, "u64"}, {NVTX_PAYLOAD_TYPE_INT64, "i64"},
      {NVTX_PAYLOAD_TYPE_DOUBLE, "double"},      {NVTX_PAYLOAD_TYPE_UNSIGNED_INT32, "u32"},
      {NVTX_PAYLOAD_TYPE_INT32, "i32"},          {NVTX_PAYLOAD_TYPE_FLOAT, "float"}};
  for (auto& p : payloads) {
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = p.name;
    a.payloadType = p.type;
    switch (p.type) {
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
        a.payload.ullValue = 18446744073709551615ull;
        break;
      case NVTX_PAYLOAD_TYPE_INT64:
        a.payload.llValue = -9000000000ll;
        break;
      case NVTX_PAYLOAD_TYPE_DOUBLE:
        a.payload.dValue = 2.5;
        break;
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
        a.payload.uiValue = 4000000000u;
        break;
      case NVTX_PAYLOAD_TYPE_INT32:
        a.payload.iValue = -42;
        break;
      default:
        a.payload.fValue = 0.25f;
        break;
    }
    nvtxRangePushEx(&a);
    nvtxRangePop();
  }
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.category = 1;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = 0xff00ff00;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = reg;
  for (int i = 0; i < 4; ++i) {
    nvtxDomainRangePushEx(domain, &a);
    nvtxDomainRangePop(domain);
  }
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "domain mark";
  nvtxDomainMarkEx(domain, &a);
  a.category = 7;
  a.message.ascii = "default-domain io";
  nvtxRangePushEx(&a);
  nvtxRangePop();
  // Without attributes at all: recorded unnamed, not under another string's id.
  nvtxDomainRangePushEx(domain, nullptr);
  nvtxDomainRangePop(domain);
  return 0;
}

// Input that does not balance: the collector records it and the reader reports it.
int Unbalanced() {
  int level = nvtxRangePop();  // a pop without a push
  std::printf("pop without push returned %d\n", level);
  nvtxRangeEnd(123456789);  // an end of an id never started
  std::thread t([] {
    nvtxRangePushA("left open by a thread");
    nvtxRangePushA("left open by a thread");
  });
  t.join();
  nvtxRangePushA("left open at exit");
  return 0;
}

// Runs ranges until killed, printing how many have ended, with the wall time, every 10 ms.
int UntilKilled() {
  long done = 0;
  timespec last{};
  clock_gettime(CLOCK_REALTIME, &last);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  while (true) {
    nvtxRangePushA("tick");
    Spin(2000);
    nvtxRangePop();
    ++done;
    timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    if ((now.tv_sec - last.tv_sec) * 1000000000L + (now.tv_nsec - last.tv_nsec) > 10000000L) {
      std::printf("%ld %lld\n", done,
                  static_cast<long long>(now.tv_sec) * 1000000000LL + now.tv_nsec);
      last = now;
    }
  }
}

// N steps of a training-loop shape: each step is a "step" range (the step marker) holding a
// range named after the step ("work_<k>"), so a window's trace shows exactly which steps it
// holds. Prints "exit <ns>" (wall clock) as its last act.
int Steps(int n, int step_ms) {
  char name[32];
  for (int k = 0; k < n; ++k) {
    nvtxRangePushA("step");
    std::snprintf(name, sizeof name, "work_%d", k);
    nvtxRangePushA(name);
    Spin(2000);
    nvtxRangePop();
    nvtxRangePop();
    usleep(static_cast<useconds_t>(step_ms) * 1000);
  }
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  std::printf("exit %lld\n", static_cast<long long>(now.tv_sec) * 1000000000LL + now.tv_nsec);
  return 0;
}

// Capture ranges: five "model_inference" ranges with 3 layers each, between setup and teardown
// work that a capture must leave out.
int Capture() {
  for (int i = 0; i < 5; ++i) {
    nvtxRangePushA("setup");
    Spin(1000);
    nvtxRangePop();
    nvtxRangePushA("model_inference");
    for (int l = 0; l < 3; ++l) {
      nvtxRangePushA("layer");
      Spin(1000);
      nvtxRangePop();
    }
    nvtxRangePop();
    nvtxRangePushA("teardown");
    nvtxRangePop();
    usleep(30000);
  }
  return 0;
}

// Message texts of every length from one reused buffer, at the end of a page followed by an
// inaccessible page and in the middle of a page: the collector's message cache compares texts
// as words, and must neither read past the page nor take a changed text for the cached one.
// Prints every name it pushes, one a line.
int Messages() {
  const long page = sysconf(_SC_PAGESIZE);
  auto* base = static_cast<char*>(
      mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (base == MAP_FAILED || mprotect(base + page, page, PROT_NONE) != 0) return 1;
  auto push = [](const char* text) {
    nvtxRangePushA(text);
    nvtxRangePop();
    std::printf("%s\n", text);
  };
  for (int at_end = 0; at_end < 2; ++at_end) {
    for (int length = 1; length <= 40; ++length) {
      char* buf = at_end ? base + page - (length + 1) : base + 100;
      std::string text;
      for (int i = 0; i < length; ++i) text += static_cast<char>('a' + i % 26);
      std::memcpy(buf, text.c_str(), length + 1);
      push(buf);
      push(buf);                          // a cache hit
      for (int i = 0; i < length; ++i) {  // the same pointer and length, one byte changed
        buf[i] = 'Z';
        push(buf);
        buf[i] = text[i];
      }
      if (length >= 2) {
        buf[length / 2] = '\0';  // the same pointer, a shorter text
        push(buf);
      }
      if (at_end) std::memset(buf, 0, length + 1);
    }
  }
  return 0;
}

// Steps marked through profsh.h instead of a marker range.
int CApiSteps(int n) {
  char name[32];
  for (int k = 0; k < n; ++k) {
    profsh_step();
    std::snprintf(name, sizeof name, "work_%d", k);
    nvtxRangePushA(name);
    Spin(2000);
    nvtxRangePop();
    usleep(20000);
  }
  return 0;
}

// Memory: allocations of known sizes in known ranges, through every wrapped entry point.
void* Touch(void* p, size_t n) {
  if (p) std::memset(p, 1, n);
  asm volatile("" : : "r"(p) : "memory");  // the allocation is used: the compiler keeps it
  return p;
}

int Memory() {
  const size_t kKiB = 1024;
  std::vector<void*> kept;
  nvtxRangePushA("keep");  // +1 MiB, kept to the end
  kept.push_back(Touch(std::malloc(1024 * kKiB), 1024 * kKiB));
  nvtxRangePop();
  nvtxRangePushA("temporary");  // +256 KiB then -256 KiB: net 0
  std::free(Touch(std::calloc(1, 256 * kKiB), 256 * kKiB));
  nvtxRangePop();
  nvtxRangePushA("outer");  // 128 KiB itself, 512 KiB in "inner"
  kept.push_back(Touch(std::aligned_alloc(64, 128 * kKiB), 128 * kKiB));
  nvtxRangePushA("inner");
  void* p = nullptr;
  if (posix_memalign(&p, 4096, 512 * kKiB) == 0) kept.push_back(Touch(p, 512 * kKiB));
  nvtxRangePop();
  nvtxRangePop();
  nvtxRangePushA("grow");  // 64 KiB grown to 2 MiB
  void* g = Touch(std::malloc(64 * kKiB), 64 * kKiB);
  kept.push_back(Touch(std::realloc(g, 2048 * kKiB), 2048 * kKiB));
  nvtxRangePop();
  nvtxRangePushA("realloc to zero");  // glibc's realloc(p, 0) frees p: net 0
  void* z = std::realloc(Touch(std::malloc(128 * kKiB), 128 * kKiB), 0);
  std::free(z);
  nvtxRangePop();
  nvtxRangePushA("mapping");  // 4 MiB mapped then unmapped: net 0
  void* m = mmap(nullptr, 4096 * kKiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m != MAP_FAILED) munmap(Touch(m, 4096 * kKiB), 4096 * kKiB);
  nvtxRangePop();
  std::thread([&kept] {
    nvtxRangePushA("on another thread");  // 300 KiB, attributed to this thread's range
    void* t = Touch(std::malloc(300 * kKiB), 300 * kKiB);
    nvtxRangePop();
    std::free(t);  // outside any range: a "[memory]" free
  }).join();
  std::printf("memory: %zu blocks kept\n", kept.size());
  return 0;  // the kept blocks are still allocated at exit
}

// NVTX from the program and from a shared library with its own NVTX globals.
extern "C" void nvtx_dso_work(int n);
int TwoObjects() {
  for (int i = 0; i < 7; ++i) {
    nvtxRangePushA("from the program");
    nvtxRangePop();
  }
  nvtx_dso_work(9);
  return 0;
}

// As fast as it can: T threads × N ranges, no work inside (the stress test).
int Stress(int threads, long n) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([n] {
      for (long i = 0; i < n; ++i) {
        nvtxRangePushA("stress");
        nvtxRangePop();
      }
    });
  }
  for (auto& t : pool) t.join();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: nvtx_workload "
                 "nested|processes|startend|attributes|unbalanced|until_killed|stress\n");
    return 2;
  }
  std::string mode = argv[1];
  if (mode == "nested")
    return Nested(static_cast<int>(Arg(argc, argv, 2, 4)),
                  static_cast<int>(Arg(argc, argv, 3, 100)));
  if (mode == "processes") return Processes(argv[0], argc > 2 ? argv[2] : "exec_nested.sh");
  if (mode == "startend") return StartEnd();
  if (mode == "attributes") return Attributes();
  if (mode == "unbalanced") return Unbalanced();
  if (mode == "until_killed") return UntilKilled();
  if (mode == "two_objects") return TwoObjects();
  if (mode == "capture") return Capture();
  if (mode == "messages") return Messages();
  if (mode == "memory") return Memory();
  if (mode == "c_api_steps") return CApiSteps(static_cast<int>(Arg(argc, argv, 2, 10)));
  if (mode == "steps")
    return Steps(static_cast<int>(Arg(argc, argv, 2, 30)),
                 static_cast<int>(Arg(argc, argv, 3, 20)));
  if (mode == "stress")
    return Stress(static_cast<int>(Arg(argc, argv, 2, 16)), Arg(argc, argv, 3, 1000000));
  std::fprintf(stderr, "nvtx_workload: unknown mode %s\n", mode.c_str());
  return 2;
}
