#include "engine/torch_plugin/python_calls.h"

#include <dlfcn.h>

#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/collector/runtime/torch_api.h"
#include "engine/torch_plugin/python_frames.h"

namespace profsh_torch {
namespace {

using CallFn = void (*)(uint32_t);
using ReturnFn = void (*)();
CallFn call_fn = nullptr;
ReturnFn return_fn = nullptr;
// The traced thread, the profile function that records its calls, and how many of its calls
// are open (returns beyond them, of frames older than the recording, are not recorded).
PyThreadState* traced_state = nullptr;
Py_tracefunc hook = nullptr;
int64_t open_calls = 0;

// Code object -> string id. Touched with the GIL only (profile functions hold it), so unlocked.
// Never freed: the process may still be running Python while statics are destroyed.
std::unordered_map<PyCodeObject*, uint32_t>& CodeIds() {
  static auto* ids = new std::unordered_map<PyCodeObject*, uint32_t>();
  return *ids;
}

uint32_t CodeId(PyCodeObject* code) {
  auto& ids = CodeIds();
  auto it = ids.find(code);
  if (it != ids.end()) return it->second;
  std::string text;
  {
    std::lock_guard<std::mutex> lock(g_python_mutex);
    text = CodeFile(code) + "(" + std::to_string(code->co_firstlineno) + "): " + CodeName(code);
  }
  // Kept alive: a freed code object's address could be reused by another function.
  Py_INCREF(code);
  return ids.emplace(code, Intern(text)).first->second;
}

int OnPythonCallsEvent(PyObject*, PyFrameObject* frame, int what, PyObject*) {
  RecordPythonEvent(frame, what);
  return 0;
}

}  // namespace

bool PythonCallsOn() {
  return call_fn != nullptr;
}

void RecordPythonEvent(PyFrameObject* frame, int what) {
  if (what == PyTrace_CALL) {
    PyCodeObject* code = PyFrame_GetCode(frame);  // a new reference; the frame keeps its code
    const uint32_t id = CodeId(code);
    Py_DECREF(code);
    ++open_calls;
    call_fn(id);
  } else if (what == PyTrace_RETURN && open_calls > 0) {
    // Also on an exception leaving the frame, and on a generator's yield: each call returns.
    --open_calls;
    return_fn();
  }
}

void CheckPythonCallsHook() {
  if (call_fn == nullptr) return;
  PyThreadState* ts = PyGILState_GetThisThreadState();
  if (ts == nullptr || ts != traced_state || ts->c_profilefunc == hook) return;
  // Replaced (sys.setprofile, cProfile, torch.profiler's with_stack): returns are no longer
  // seen, so the open calls end here rather than stay open under every later sample.
  for (; open_calls > 0; --open_calls) return_fn();
  call_fn = nullptr;
}

bool StartPythonCalls(Py_tracefunc shared_hook) {
  auto call = reinterpret_cast<CallFn>(dlsym(RTLD_DEFAULT, "profsh_collector_python_call"));
  auto ret = reinterpret_cast<ReturnFn>(dlsym(RTLD_DEFAULT, "profsh_collector_python_return"));
  if (call == nullptr || ret == nullptr) return false;  // an older collector
  PyGILState_STATE gil = PyGILState_Ensure();
  PyThreadState* ts = PyGILState_GetThisThreadState();
  const bool shared = shared_hook != nullptr && ts != nullptr && ts->c_profilefunc == shared_hook;
  if (!shared && ts != nullptr && ts->c_profilefunc != nullptr) {
    std::fprintf(stderr,
                 "profsh: cpu: this thread already has a Python profiler (sys.setprofile); it is "
                 "left alone and its samples get no Python frames\n");
    PyGILState_Release(gil);
    return false;
  }
  call_fn = call;
  return_fn = ret;
  traced_state = ts;
  hook = shared ? shared_hook : &OnPythonCallsEvent;
  // The frames running now are calls whose returns the profile function will see.
  std::vector<PyFrameObject*> frames;
  PyFrameObject* f = PyEval_GetFrame();  // borrowed
  Py_XINCREF(f);
  while (f != nullptr) {
    frames.push_back(f);
    f = PyFrame_GetBack(f);  // a new reference, or null
  }
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) RecordPythonEvent(*it, PyTrace_CALL);
  for (PyFrameObject* frame : frames) Py_DECREF(frame);
  if (!shared) PyEval_SetProfile(&OnPythonCallsEvent, nullptr);
  PyErr_Clear();
  PyGILState_Release(gil);
  return true;
}

}  // namespace profsh_torch
