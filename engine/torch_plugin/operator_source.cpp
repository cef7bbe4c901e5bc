// libprofsh_torch.so: profsh's PyTorch operator source. profsh's start-up hook loads it into a
// Python process right after `import torch`; it registers global RecordFunction callbacks and
// writes every operator into the collector's per-thread rings (through the collector's C entry
// points, found with dlsym: the collector itself never links libtorch).
//
// Per operator: the name and scope, the input shapes and types in torch's own format (computed
// by torch's functions, once per distinct input signature), the sequence number and forward
// thread that link backward operators to their forward, the Python stack read from the
// interpreter's frames (with "nn.Module: Name_N" for module calls, as torch writes them), and
// FLOPs from torch's formulas. What to collect comes from PROFSH_RECORD_SHAPES,
// PROFSH_WITH_STACK, PROFSH_WITH_FLOPS and PROFSH_PROFILE_MEMORY.
#include <Python.h>
#include <dlfcn.h>
#include <frameobject.h>
#include <pthread.h>
#include <unistd.h>
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE

#include <ATen/record_function.h>
#include <torch/csrc/profiler/util.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/collector/runtime/torch_api.h"

namespace {

using InternFn = uint32_t (*)(const char*, size_t);
using OffFlagFn = const volatile uint8_t* (*)();
using BeginFn = void (*)(uint32_t, const profsh_op_info*);
using EndFn = void (*)();
using MemoryModeFn = void (*)(int);

InternFn intern_fn;
BeginFn begin_fn;
EndFn end_fn;
const volatile uint8_t* off_flag;
bool record_shapes = false, with_stack = false, with_flops = false;

bool EnvFlag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

uint32_t Intern(const std::string& s) {
  return intern_fn(s.data(), s.size());
}

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

Signature Inputs(const at::RecordFunction& fn, const char* name) {
  uint64_t key = InputSignature(fn, name);
  auto it = t_signatures.find(key);
  if (it != t_signatures.end()) return it->second;
  Signature s{Intern(torch::profiler::impl::shapesToStr(torch::profiler::impl::inputSizes(fn))),
              Intern(torch::profiler::impl::dtypesToStr(torch::profiler::impl::inputTypes(fn)))};
  if (t_signatures.size() > 100000) t_signatures.clear();  // a bound, not a cache policy
  t_signatures.emplace(key, s);
  return s;
}

// --- Python stacks ---
// Torch ops usually run with the GIL released (the Python bindings drop it), so the stack is read
// from this thread's interpreter frames directly (CPython 3.11's frame layout), the way sampling
// profilers read them: the frames belong to this thread, which is below them in C code, so they
// cannot change while we read. Nothing is created or reference-counted: code objects' names, and
// for module calls `self` and its type's name, which live at least as long as the frame.
// Module names are keyed by the object's address, as torch keys them; a module created at the
// address of a freed one inherits its name.
std::mutex g_python_mutex;  // the caches below
std::vector<std::string> g_path_prefixes;
std::unordered_map<PyCodeObject*, std::string> g_code_files;  // code -> "trimmed/file.py"
std::unordered_map<PyCodeObject*, std::string> g_code_names;  // code -> function name
std::unordered_map<const void*, std::string> g_module_names;  // module object -> "Name_N"
std::unordered_map<std::string, int> g_module_counts;

// An ASCII (or already UTF-8 encoded) str's text without creating anything (no GIL needed).
std::string StrText(PyObject* s) {
  if (s == nullptr || !PyUnicode_Check(s)) return "?";
  if (PyUnicode_IS_COMPACT_ASCII(s)) {
    return std::string(static_cast<const char*>(PyUnicode_DATA(s)),
                       static_cast<size_t>(PyUnicode_GET_LENGTH(s)));
  }
  auto* compact = reinterpret_cast<PyCompactUnicodeObject*>(s);
  if (compact->utf8 != nullptr)
    return std::string(compact->utf8, static_cast<size_t>(compact->utf8_length));
  return "?";
}

// sys.path entries, longest first: file names are shown relative to them, as torch does. Read
// once, with the GIL (the plugin is loaded from Python).
void LoadPathPrefixes() {
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject* path = PySys_GetObject("path");  // borrowed
  if (path != nullptr && PyList_Check(path)) {
    for (Py_ssize_t i = 0; i < PyList_Size(path); ++i) {
      PyObject* item = PyList_GetItem(path, i);
      if (!PyUnicode_Check(item)) continue;
      const char* s = PyUnicode_AsUTF8(item);
      if (s && *s)
        g_path_prefixes.emplace_back(std::string(s) + (s[std::strlen(s) - 1] == '/' ? "" : "/"));
    }
  }
  PyGILState_Release(gil);
  std::sort(g_path_prefixes.begin(), g_path_prefixes.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

const std::string& CodeFile(PyCodeObject* code) {
  auto it = g_code_files.find(code);
  if (it != g_code_files.end()) return it->second;
  std::string file = StrText(code->co_filename);
  for (const std::string& p : g_path_prefixes) {
    if (file.compare(0, p.size(), p) == 0) {
      file = file.substr(p.size());
      break;
    }
  }
  return g_code_files.emplace(code, std::move(file)).first->second;
}

const std::string& CodeName(PyCodeObject* code) {
  auto it = g_code_names.find(code);
  if (it != g_code_names.end()) return it->second;
  return g_code_names.emplace(code, StrText(code->co_name)).first->second;
}

// "nn.Module: Linear_0": the class name and the index of the instance among its class's, in the
// order they are first met. `self` is the first local of Module._call_impl.
std::string ModuleEntry(_PyInterpreterFrame* f) {
  PyObject* self = f->localsplus[0];
  if (self == nullptr) return "";
  auto it = g_module_names.find(self);
  if (it == g_module_names.end()) {
    const char* cls = Py_TYPE(self)->tp_name;
    const char* dot = std::strrchr(cls, '.');
    std::string name = dot ? dot + 1 : cls;
    int n = g_module_counts[name]++;
    it = g_module_names.emplace(self, name + "_" + std::to_string(n)).first;
  }
  return "nn.Module: " + it->second;
}

// The Python stack of the calling thread, innermost first, in torch's "file(line): func" form.
uint32_t PythonStack() {
  PyThreadState* ts = PyGILState_GetThisThreadState();  // no GIL needed; null: not a Python thread
  if (ts == nullptr || ts->cframe == nullptr) return 0;
  std::lock_guard<std::mutex> lock(g_python_mutex);
  std::string stack;
  for (_PyInterpreterFrame* f = ts->cframe->current_frame; f != nullptr; f = f->previous) {
    if (_PyFrame_IsIncomplete(f)) continue;
    PyCodeObject* code = f->f_code;
    const std::string& file = CodeFile(code);
    const std::string& func = CodeName(code);
    std::string entry;
    if (func == "_call_impl" && file.size() >= 20 &&
        file.compare(file.size() - 20, 20, "nn/modules/module.py") == 0) {
      entry = ModuleEntry(f);
    } else {
      int line = PyCode_Addr2Line(
          code, _PyInterpreterFrame_LASTI(f) * static_cast<int>(sizeof(_Py_CODEUNIT)));
      entry = file + "(" + std::to_string(line) + "): " + func;
    }
    if (entry.empty()) continue;
    if (!stack.empty()) stack += ';';
    stack += entry;
  }
  return stack.empty() ? 0 : Intern(stack);
}

// torch's thread ids (RecordFunction::currentThreadId(): 1, 2...) as the OS thread ids the trace
// uses, so that a backward op's forward thread names a thread of the trace.
std::mutex g_threads_mutex;
std::unordered_map<uint64_t, uint64_t> g_os_thread_of;
thread_local bool t_thread_known = false;

// fork() from one thread (DataLoader workers) while another holds a mutex would leave it locked
// in the child: both are taken around fork, so the child inherits them unlocked and consistent.
void LockForFork() {
  g_python_mutex.lock();
  g_threads_mutex.lock();
}
void UnlockAfterFork() {
  g_threads_mutex.unlock();
  g_python_mutex.unlock();
}

uint64_t OsThread(uint64_t torch_thread) {
  std::lock_guard<std::mutex> lock(g_threads_mutex);
  auto it = g_os_thread_of.find(torch_thread);
  return it == g_os_thread_of.end() ? 0 : it->second;
}

void NoteThread() {
  if (t_thread_known) return;
  t_thread_known = true;
  std::lock_guard<std::mutex> lock(g_threads_mutex);
  g_os_thread_of[at::RecordFunction::currentThreadId()] = static_cast<uint64_t>(gettid());
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

std::unique_ptr<at::ObserverContext> OnStart(const at::RecordFunction& fn) {
  if (fn.isAsync()) return nullptr;
  const char* name = fn.name();
  const uint32_t name_id = NameId(name);
  if (*off_flag != 0 && !(name_id & kCollectorTags)) return nullptr;
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
  if (with_stack && fn.scope() != at::RecordScope::BACKWARD_FUNCTION) info.stack = PythonStack();
  if (with_flops && HasFlopsFormula(name)) {
    info.flops =
        torch::profiler::impl::computeFlops(name, torch::profiler::impl::saveExtraArgs(fn));
  }
  begin_fn(name_id, &info);
  return std::make_unique<Recorded>();
}

void OnEnd(const at::RecordFunction& fn, at::ObserverContext* ctx) {
  if (ctx != nullptr) end_fn();
}

struct Attach {
  Attach() {
    intern_fn = reinterpret_cast<InternFn>(dlsym(RTLD_DEFAULT, "profsh_collector_intern"));
    begin_fn = reinterpret_cast<BeginFn>(dlsym(RTLD_DEFAULT, "profsh_collector_op_begin"));
    end_fn = reinterpret_cast<EndFn>(dlsym(RTLD_DEFAULT, "profsh_collector_op_end"));
    auto off = reinterpret_cast<OffFlagFn>(dlsym(RTLD_DEFAULT, "profsh_collector_off_flag"));
    if (!intern_fn || !begin_fn || !end_fn || !off) return;  // not under profsh: stay out
    off_flag = off();
    record_shapes = EnvFlag("PROFSH_RECORD_SHAPES");
    with_stack = EnvFlag("PROFSH_WITH_STACK");
    with_flops = EnvFlag("PROFSH_WITH_FLOPS");
    if (with_stack) LoadPathPrefixes();
    pthread_atfork(&LockForFork, &UnlockAfterFork, &UnlockAfterFork);
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
