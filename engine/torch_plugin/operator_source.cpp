// libprofsh_torch.so: profsh's PyTorch operator source. profsh's start-up hook loads it into a
// Python process right after `import torch`; it registers global RecordFunction callbacks and
// writes every operator into the collector's per-thread rings (through the collector's C entry
// points, found with dlsym: the collector itself never links libtorch).
//
// Per operator: the name and scope, the input shapes and types in torch's own format (computed
// by torch's functions, once per distinct input signature), the sequence number and forward
// thread that link backward operators to their forward, the Python stack (read from the
// interpreter's frames, python_frames.h, or in torch's form, torch_form_stack.h), and FLOPs from
// torch's formulas. What to collect comes from PROFSH_RECORD_SHAPES,
// PROFSH_WITH_STACK, PROFSH_WITH_FLOPS, PROFSH_PROFILE_MEMORY and PROFSH_PYTHON_CALLS (the
// cpu activity's Python frames, python_calls.h).
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <ATen/record_function.h>
#include <torch/csrc/profiler/util.h>
#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/collector/runtime/torch_api.h"
#include "engine/torch_plugin/python_calls.h"
#include "engine/torch_plugin/python_frames.h"
#include "engine/torch_plugin/torch_form_stack.h"

namespace {

using profsh_torch::g_python_mutex;

using InternFn = uint32_t (*)(const char*, size_t);
using OffFlagFn = const volatile uint8_t* (*)();
using BeginFn = void (*)(uint32_t, const profsh_op_info*);
using CountFn = void (*)(uint32_t);
using EndFn = void (*)();
using MemoryModeFn = void (*)(int);

InternFn intern_fn;
BeginFn begin_fn;
CountFn count_fn;  // optional: a collector without it counts nothing
EndFn end_fn;
const volatile uint8_t* off_flag;
bool record_shapes = false, with_flops = false;
// PROFSH_WITH_STACK: "torch" for torch 1.13's form (torch_form_stack.h), any other non-empty
// value but "0" for the executing line (python_frames.h).
enum class StackForm { kNone, kExecutingLine, kTorch } stack_form = StackForm::kNone;

bool EnvFlag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

}  // namespace

uint32_t profsh_torch::Intern(const std::string& s) {
  return intern_fn(s.data(), s.size());
}

namespace {
using profsh_torch::Intern;

// --- names: RecordFunction names are stable pointers for dispatcher ops; the text is compared
// anyway (user scopes may pass temporary strings) ---
struct NameEntry {
  const char* pointer = nullptr;
  std::string text;
  uint32_t id = 0;
};
thread_local NameEntry t_names[256];

uint32_t NameId(const char* name) {
  NameEntry& e = t_names[(reinterpret_cast<uintptr_t>(name) >> 4) & 255];
  if (e.pointer == name && e.text == name) return e.id;
  e.pointer = name;
  e.text = name;
  e.id = intern_fn(name, e.text.size());
  return e.id;
}

// --- input shapes and types: torch's format, cached by a hash of what decides it ---
uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

uint64_t InputSignature(const at::RecordFunction& fn, const char* name) {
  uint64_t h = Mix(0x1234, reinterpret_cast<uintptr_t>(name));
  for (const c10::IValue& v : fn.inputs()) {
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      if (!t.defined()) {
        h = Mix(h, 1);
        continue;
      }
      h = Mix(h, 2 + static_cast<uint64_t>(t.scalar_type()) * 16);
      auto sizes = t.sizes();
      h = Mix(h, sizes.size());
      for (int64_t s : sizes) h = Mix(h, static_cast<uint64_t>(s));
    } else if (v.isList()) {
      // torch formats lists by their kind only (shapes [], type "GenericList" or the like).
      h = Mix(h, 3 + (v.isTensorList()   ? 16
                      : v.isIntList()    ? 32
                      : v.isDoubleList() ? 48
                      : v.isBoolList()   ? 64
                                         : 80));
    } else if (v.isScalar()) {
      h = Mix(h, 4 + (v.isInt() ? 16 : v.isDouble() ? 32 : v.isBool() ? 48 : 64));
    } else {
      h = Mix(h, 5);
    }
  }
  return h;
}

struct Signature {
  uint32_t shapes, dtypes;
};
thread_local std::unordered_map<uint64_t, Signature> t_signatures;

// The same formatting under two names: dtypesToStr until torch 2.0, strListToStr since.
std::string TypesText(const std::vector<std::string>& types) {
#if TORCH_VERSION_MAJOR >= 2
  return torch::profiler::impl::strListToStr(types);
#else
  return torch::profiler::impl::dtypesToStr(types);
#endif
}

Signature Inputs(const at::RecordFunction& fn, const char* name) {
  uint64_t key = InputSignature(fn, name);
  auto it = t_signatures.find(key);
  if (it != t_signatures.end()) return it->second;
  Signature s{Intern(torch::profiler::impl::shapesToStr(torch::profiler::impl::inputSizes(fn))),
              Intern(TypesText(torch::profiler::impl::inputTypes(fn)))};
  if (t_signatures.size() > 100000) t_signatures.clear();  // a bound, not a cache policy
  t_signatures.emplace(key, s);
  return s;
}

// torch's thread ids (RecordFunction::currentThreadId(): 1, 2, ... in the order threads first
// record) as the OS thread ids the trace uses, so that a backward op's forward thread names a
// thread of the trace. A fixed table without a lock: backward operators read it on the
// per-event path. A torch id past its end reads as 0, an unknown forward thread.
constexpr uint64_t kMaxTorchThreads = 4096;
std::atomic<uint64_t> g_os_thread_of[kMaxTorchThreads];
thread_local bool t_thread_known = false;

// fork() from one thread (DataLoader workers) while another holds the Python names' mutex would
// leave it locked in the child: it is taken around fork, so the child inherits it unlocked.
void LockForFork() {
  g_python_mutex.lock();
}
void UnlockInParent() {
  g_python_mutex.unlock();
}
void UnlockInChild() {
  g_python_mutex.unlock();
  t_thread_known = false;  // the forking thread has a new OS thread id in the child
}

uint64_t OsThread(uint64_t torch_thread) {
  return torch_thread < kMaxTorchThreads
             ? g_os_thread_of[torch_thread].load(std::memory_order_acquire)
             : 0;
}

void NoteThread() {
  if (t_thread_known) return;
  t_thread_known = true;
  const uint64_t id = at::RecordFunction::currentThreadId();
  if (id < kMaxTorchThreads)
    g_os_thread_of[id].store(static_cast<uint64_t>(gettid()), std::memory_order_release);
}

bool HasFlopsFormula(const char* name) {
  static const char* const kOps[] = {"aten::conv2d",  "aten::mm",  "aten::addmm", "aten::bmm",
                                     "aten::baddbmm", "aten::mul", "aten::add"};
  for (const char* op : kOps) {
    if (std::strcmp(name, op) == 0) return true;
  }
  return false;
}

// Marks an operator whose begin was written, so that its end is too (and only then). It is a
// heap object because torch's callback API pairs an end with its start only through the
// context it hands back; the allocation (tens of nanoseconds) is small next to torch's own
// per-op cost and is made only while recording.
struct Recorded : at::ObserverContext {};

// The collector tags the ids of step markers and capture ranges (runtime.h kTag*): those must
// reach it even while nothing is recorded, since they are what switches recording on.
constexpr uint32_t kCollectorTags = (1u << 30) | (1u << 29);
// The off flag's bit for "no step marker has matched yet" (runtime.h kOffBeforeFirstStep).
constexpr uint8_t kCollectorBeforeFirstStep = 1u << 5;

std::unique_ptr<at::ObserverContext> OnStart(const at::RecordFunction& fn) {
  if (fn.isAsync()) return nullptr;
  const char* name = fn.name();
  const uint32_t name_id = NameId(name);
  if (*off_flag != 0 && !(name_id & kCollectorTags)) {
    // Before a step marker first matched, record_function names are counted: the candidates
    // named when the marker never matches.
    if ((*off_flag & kCollectorBeforeFirstStep) && count_fn != nullptr &&
        fn.scope() == at::RecordScope::USER_SCOPE) {
      count_fn(name_id);
    }
    return nullptr;
  }
  profsh_op_info info{};
  info.scope = static_cast<uint8_t>(fn.scope());
  info.sequence = fn.seqNr();
  NoteThread();
  info.forward_thread = fn.forwardThreadId() ? OsThread(fn.forwardThreadId()) : 0;
  if (record_shapes) {
    Signature s = Inputs(fn, name);
    info.shapes = s.shapes;
    info.dtypes = s.dtypes;
  }
  // Backward functions take their forward op's stack when the trace is read, as in torch.
  if (fn.scope() != at::RecordScope::BACKWARD_FUNCTION) {
    if (stack_form == StackForm::kExecutingLine) info.stack = profsh_torch::ExecutingLineStack();
    if (stack_form == StackForm::kTorch) info.stack = profsh_torch::TorchFormStack();
  }
  if (with_flops && HasFlopsFormula(name)) {
    info.flops =
        torch::profiler::impl::computeFlops(name, torch::profiler::impl::saveExtraArgs(fn));
  }
  begin_fn(name_id, &info);
  if (stack_form == StackForm::kTorch) profsh_torch::NoteRecordingState();
  profsh_torch::CheckPythonCallsHook();
  return std::make_unique<Recorded>();
}

void OnEnd(const at::RecordFunction& fn, at::ObserverContext* ctx) {
  if (ctx != nullptr) end_fn();
}

struct Attach {
  Attach() {
    intern_fn = reinterpret_cast<InternFn>(dlsym(RTLD_DEFAULT, "profsh_collector_intern"));
    begin_fn = reinterpret_cast<BeginFn>(dlsym(RTLD_DEFAULT, "profsh_collector_op_begin"));
    count_fn = reinterpret_cast<CountFn>(dlsym(RTLD_DEFAULT, "profsh_collector_count_name"));
    end_fn = reinterpret_cast<EndFn>(dlsym(RTLD_DEFAULT, "profsh_collector_op_end"));
    auto off = reinterpret_cast<OffFlagFn>(dlsym(RTLD_DEFAULT, "profsh_collector_off_flag"));
    if (!intern_fn || !begin_fn || !end_fn || !off) return;  // not under profsh: stay out
    off_flag = off();
    record_shapes = EnvFlag("PROFSH_RECORD_SHAPES");
    if (EnvFlag("PROFSH_WITH_STACK")) {
      const char* form = std::getenv("PROFSH_WITH_STACK");
      stack_form = std::strcmp(form, "torch") == 0 ? StackForm::kTorch : StackForm::kExecutingLine;
    }
    with_flops = EnvFlag("PROFSH_WITH_FLOPS");
    const bool python_calls = EnvFlag("PROFSH_PYTHON_CALLS");
    if (stack_form != StackForm::kNone || python_calls) profsh_torch::LoadPythonNames();
    if (stack_form == StackForm::kTorch) profsh_torch::StartTorchFormStacks(off_flag);
    if (python_calls)
      profsh_torch::StartPythonCalls(stack_form == StackForm::kTorch ? profsh_torch::TorchFormHook()
                                                                     : nullptr);
    pthread_atfork(&LockForFork, &UnlockInParent, &UnlockInChild);
    if (EnvFlag("PROFSH_PROFILE_MEMORY")) {
      // Count what torch counts: c10's CPU tensor storage.
      if (auto mode = reinterpret_cast<MemoryModeFn>(dlsym(RTLD_DEFAULT, "profsh_memory_set_mode")))
        mode(1);
    }
    at::addGlobalCallback(at::RecordFunctionCallback(&OnStart, &OnEnd)
                              .needsInputs(record_shapes || with_flops)
                              .needsIds(true));
  }
} g_attach;

}  // namespace
