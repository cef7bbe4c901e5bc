#include "engine/torch_plugin/torch_form_stack.h"

#include <cstdio>

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/torch_plugin/python_calls.h"
#include "engine/torch_plugin/python_frames.h"

namespace profsh_torch {
namespace {

// A frame of the traced thread's stack, as the profile function saw it enter.
struct Entry {
  PyFrameObject* frame = nullptr;  // null: a C function
  PyCodeObject* code = nullptr;
  int line = 0;                       // where it was entered, or where it was when recording began
  const std::string* text = nullptr;  // resolved when first needed (modules and C functions: when
                                      // entered during a recording, or when one begins)
};

struct CodeLine {
  PyCodeObject* code;
  int line;
  bool operator==(const CodeLine& o) const { return code == o.code && line == o.line; }
};
struct CodeLineHash {
  size_t operator()(const CodeLine& k) const {
    return std::hash<const void*>()(k.code) * 31 + static_cast<size_t>(k.line);
  }
};

// Touched by the traced thread only (its profile function and its operators' callbacks), so
// nothing here is locked.
struct Tracer {
  const volatile uint8_t* off_flag = nullptr;
  uint8_t last_off = 1;
  std::vector<Entry> stack;  // outermost first
  std::unordered_map<CodeLine, std::string, CodeLineHash> lines;
  // Per recording, as torch's caches are per profiling session.
  std::unordered_map<const void*, std::string> c_names;  // PyMethodDef -> first repr met
  std::unordered_map<const void*, std::string> modules;  // module object -> "nn.Module: Name_N"
  std::unordered_map<std::string, int> module_counts;
};
// A function static: operator_source.cpp's start-up object may run before this file's globals
// would be constructed.
Tracer& TheTracer() {
  static Tracer tracer;
  return tracer;
}
thread_local bool t_traced = false;

bool Recording(const Tracer& t) {
  return t.last_off == 0;
}

// torch numbers a class's modules in the order their calls were entered during the recording.
// Called with the GIL (the profile function, or the start of a recording seen by it).
const std::string* ModuleText(Tracer& t, PyFrameObject* frame) {
  PyObject* self = FrameSelf(frame);
  if (self == nullptr) return nullptr;
  auto it = t.modules.find(self);
  if (it == t.modules.end()) {
    std::string cls = ModuleClassName(self);
    int n = t.module_counts[cls]++;
    it = t.modules.emplace(self, "nn.Module: " + cls + "_" + std::to_string(n)).first;
  }
  return &it->second;
}

// A C function's repr, as torch takes it (called with the GIL, from the profile function; the
// repr of a builtin function or method runs no Python code).
const std::string* CFunctionText(Tracer& t, PyObject* fn) {
  if (!PyCFunction_Check(fn)) return nullptr;
  const void* key = reinterpret_cast<PyCFunctionObject*>(fn)->m_ml;
  auto it = t.c_names.find(key);
  if (it != t.c_names.end()) return &it->second;
  std::string text;
  if (PyObject* repr = PyObject_Repr(fn)) {
    Py_ssize_t size = 0;
    if (const char* s = PyUnicode_AsUTF8AndSize(repr, &size)) text.assign(s, size);
    Py_DECREF(repr);
  }
  PyErr_Clear();
  if (text.empty())
    text = std::string("<built-in function ") +
           reinterpret_cast<PyCFunctionObject*>(fn)->m_ml->ml_name + ">";
  return &t.c_names.emplace(key, std::move(text)).first->second;
}

void PushFrame(Tracer& t, PyFrameObject* frame, int line) {
  Entry e;
  e.frame = frame;
  e.code = PyFrame_GetCode(frame);  // a new reference; the running frame keeps its code
  Py_DECREF(e.code);
  e.line = line;
  if (Recording(t) && IsModuleCall(e.code)) e.text = ModuleText(t, frame);
  t.stack.push_back(e);
}

// Frames that return are popped with whatever C calls they left open; a return of a frame the
// stack does not hold (one that was running before the profile function was set) is ignored.
void PopFrame(Tracer& t, PyFrameObject* frame) {
  for (size_t i = t.stack.size(); i-- > 0;) {
    if (t.stack[i].frame == frame) {
      t.stack.resize(i);
      return;
    }
  }
}

// A recording begins: what runs now is shown where it is now, C functions that are running
// are not shown (torch's tracer starts from the Python frames), and names start afresh. Seen
// by an operator (whose thread released the GIL) or by the profile function (which holds it):
// reading frames takes it, which happens once per recording.
void BeginRecording(Tracer& t) {
  PyGILState_STATE gil = PyGILState_Ensure();
  t.c_names.clear();
  t.modules.clear();
  t.module_counts.clear();
  size_t kept = 0;
  for (Entry& e : t.stack) {
    if (e.frame == nullptr) continue;
    e.line = PyFrame_GetLineNumber(e.frame);
    e.text = IsModuleCall(e.code) ? ModuleText(t, e.frame) : nullptr;
    t.stack[kept++] = e;
  }
  t.stack.resize(kept);
  PyGILState_Release(gil);
}

void Sync(Tracer& t) {
  const uint8_t off = *t.off_flag;
  if (off == t.last_off) return;
  t.last_off = off;
  if (off == 0) BeginRecording(t);
}

int OnProfileEvent(PyObject*, PyFrameObject* frame, int what, PyObject* arg) {
  if (PythonCallsOn()) RecordPythonEvent(frame, what);
  Tracer& t = TheTracer();
  Sync(t);
  switch (what) {
    case PyTrace_CALL:
      PushFrame(t, frame, PyFrame_GetLineNumber(frame));
      break;
    case PyTrace_RETURN:
      PopFrame(t, frame);
      break;
    case PyTrace_C_CALL:
      t.stack.push_back(Entry{nullptr, nullptr, 0, Recording(t) ? CFunctionText(t, arg) : nullptr});
      break;
    case PyTrace_C_RETURN:
    case PyTrace_C_EXCEPTION:
      if (!t.stack.empty() && t.stack.back().frame == nullptr) t.stack.pop_back();
      break;
    default:
      break;
  }
  return 0;
}

const std::string* FrameText(Tracer& t, Entry& e) {
  if (e.text != nullptr || e.frame == nullptr) return e.text;
  CodeLine key{e.code, e.line};
  auto it = t.lines.find(key);
  if (it == t.lines.end()) {
    std::lock_guard<std::mutex> lock(g_python_mutex);
    it = t.lines
             .emplace(key,
                      CodeFile(e.code) + "(" + std::to_string(e.line) + "): " + CodeName(e.code))
             .first;
  }
  e.text = &it->second;
  return e.text;
}

// Whether this thread's profile hook is still ours. Once anything replaced it (cProfile,
// torch.profiler's own with_stack, sys.setprofile(None), code restoring what sys.getprofile()
// returned, which is None for a C hook), frames return without our seeing it: the kept stack
// would point at freed frames, so it is dropped and this thread gets no more stacks.
bool HookStillOurs(Tracer& t) {
  if (!t_traced) return false;
  PyThreadState* ts = PyGILState_GetThisThreadState();
  if (ts != nullptr && ts->c_profilefunc == &OnProfileEvent) return true;
  t_traced = false;
  t.stack.clear();
  return false;
}

}  // namespace

void StartTorchFormStacks(const volatile uint8_t* off_flag) {
  PyGILState_STATE gil = PyGILState_Ensure();
  PyThreadState* ts = PyGILState_GetThisThreadState();
  if (ts != nullptr && ts->c_profilefunc != nullptr) {
    // A profiler of the user's (cProfile, yappi, pyinstrument) runs already: it is not replaced.
    std::fprintf(stderr,
                 "profsh: --with-stack=torch: this thread already has a Python profiler "
                 "(sys.setprofile); it is left alone and operators get no torch-form stacks\n");
    PyGILState_Release(gil);
    return;
  }
  Tracer& t = TheTracer();
  t.off_flag = off_flag;
  t_traced = true;
  // The frames running now, outermost first (torch's tracer starts from them the same way).
  std::vector<PyFrameObject*> frames;
  PyFrameObject* f = PyEval_GetFrame();  // borrowed
  Py_XINCREF(f);
  while (f != nullptr) {
    frames.push_back(f);
    f = PyFrame_GetBack(f);  // a new reference, or null
  }
  for (auto it = frames.rbegin(); it != frames.rend(); ++it)
    PushFrame(t, *it, PyFrame_GetLineNumber(*it));
  // The running frames keep their frame objects alive: the references taken here go.
  for (PyFrameObject* frame : frames) Py_DECREF(frame);
  Sync(t);
  PyEval_SetProfile(&OnProfileEvent, nullptr);
  PyErr_Clear();
  PyGILState_Release(gil);
}

Py_tracefunc TorchFormHook() {
  return &OnProfileEvent;
}

uint32_t TorchFormStack() {
  if (!t_traced) return 0;
  Tracer& t = TheTracer();
  if (!HookStillOurs(t)) return 0;
  Sync(t);
  std::string stack;
  for (auto it = t.stack.rbegin(); it != t.stack.rend(); ++it) {
    const std::string* text = FrameText(t, *it);
    if (text == nullptr || text->empty()) continue;
    if (!stack.empty()) stack += ';';
    stack += *text;
  }
  return stack.empty() ? 0 : Intern(stack);
}

void NoteRecordingState() {
  if (!t_traced) return;
  Tracer& t = TheTracer();
  if (HookStillOurs(t)) Sync(t);
}

}  // namespace profsh_torch
