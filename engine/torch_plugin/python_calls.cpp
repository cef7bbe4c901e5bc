#include "engine/torch_plugin/python_calls.h"

#include <dlfcn.h>

#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/collector/runtime/torch_api.h"
#include "engine/torch_plugin/python_calls_threads.h"
#include "engine/torch_plugin/python_frames.h"

namespace profsh_torch {
namespace {

using CallFn = void (*)(uint32_t);
using ReturnFn = void (*)();
CallFn call_fn = nullptr;
ReturnFn return_fn = nullptr;

// A thread's recording: it begins with the thread's first Python event after its profile
// function was installed (the importing thread's at once), and ends for good once that function
// was replaced (returns are no longer seen).
enum class Recording : uint8_t { kNotBegun, kOn, kEnded };
struct ThreadCalls {
  Recording recording = Recording::kNotBegun;
  Py_tracefunc hook = nullptr;  // the profile function that records the thread's calls
  int64_t open_calls = 0;       // returns beyond them (of frames older than the recording) are
                                // not recorded
};
// Per OS thread, so each thread's events touch only its own state (and its own collector levels).
thread_local ThreadCalls t_calls;

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

void Record(ThreadCalls& t, PyFrameObject* frame, int what) {
  if (what == PyTrace_CALL) {
    PyCodeObject* code = PyFrame_GetCode(frame);  // a new reference; the frame keeps its code
    const uint32_t id = CodeId(code);
    Py_DECREF(code);
    ++t.open_calls;
    call_fn(id);
  } else if (what == PyTrace_RETURN && t.open_calls > 0) {
    // Also on an exception leaving the frame, and on a generator's yield: each call returns.
    --t.open_calls;
    return_fn();
  }
}

// `innermost` (a new reference, or null) and the frames that called it are running: they are
// calls whose returns the profile function will see, recorded outermost first.
void BeginRecording(ThreadCalls& t, Py_tracefunc hook, PyFrameObject* innermost) {
  t.hook = hook;
  t.recording = Recording::kOn;
  std::vector<PyFrameObject*> frames;
  for (PyFrameObject* f = innermost; f != nullptr; f = PyFrame_GetBack(f)) frames.push_back(f);
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) Record(t, *it, PyTrace_CALL);
  for (PyFrameObject* frame : frames) Py_DECREF(frame);
}

// The profile function of every traced thread but one whose hook is shared. A thread other than
// the importing one begins at its first event: its frames can only be read with the GIL, and
// only it may write its collector levels, so they are read here rather than when the function
// was installed from the importing thread.
int OnPythonCallsEvent(PyObject*, PyFrameObject* frame, int what, PyObject*) {
  ThreadCalls& t = t_calls;
  if (__builtin_expect(t.recording == Recording::kOn, 1)) {
    Record(t, frame, what);
  } else if (t.recording == Recording::kNotBegun) {
    // A returning frame is over; any other event's frame still runs.
    PyFrameObject* running = frame;
    if (what == PyTrace_RETURN)
      running = PyFrame_GetBack(frame);  // a new reference, or null
    else
      Py_INCREF(frame);
    BeginRecording(t, &OnPythonCallsEvent, running);
  }
  return 0;
}

}  // namespace

bool PythonCallsOn() {
  return call_fn != nullptr;
}

void RecordPythonEvent(PyFrameObject* frame, int what) {
  ThreadCalls& t = t_calls;
  if (t.recording == Recording::kOn) Record(t, frame, what);
}

void CheckPythonCallsHook() {
  ThreadCalls& t = t_calls;
  if (t.recording != Recording::kOn) return;
  PyThreadState* ts = PyGILState_GetThisThreadState();
  if (ts == nullptr || ts->c_profilefunc == t.hook) return;
  // Replaced (sys.setprofile, cProfile, torch.profiler's with_stack): returns are no longer
  // seen, so the open calls end here rather than stay open under every later sample.
  for (; t.open_calls > 0; --t.open_calls) return_fn();
  t.recording = Recording::kEnded;
}

bool StartPythonCalls(Py_tracefunc shared_hook) {
#ifdef Py_GIL_DISABLED
  // The code-object table and the other threads' profile functions rely on the GIL.
  (void)shared_hook;
  std::fprintf(stderr,
               "profsh: cpu: a free-threaded Python (no GIL): samples get no Python "
               "frames\n");
  return false;
#endif
  auto call = reinterpret_cast<CallFn>(dlsym(RTLD_DEFAULT, "profsh_collector_python_call"));
  auto ret = reinterpret_cast<ReturnFn>(dlsym(RTLD_DEFAULT, "profsh_collector_python_return"));
  if (call == nullptr || ret == nullptr) return false;  // an older collector
  PyGILState_STATE gil = PyGILState_Ensure();
  call_fn = call;
  return_fn = ret;
  PyThreadState* ts = PyGILState_GetThisThreadState();
  const bool shared = shared_hook != nullptr && ts != nullptr && ts->c_profilefunc == shared_hook;
  bool traced = false;
  if (!shared && ts != nullptr && ts->c_profilefunc != nullptr) {
    std::fprintf(stderr,
                 "profsh: cpu: the thread that imported torch already has a Python profiler "
                 "(sys.setprofile); it is left alone and its samples get no Python frames\n");
  } else {
    PyFrameObject* innermost = PyEval_GetFrame();  // borrowed
    Py_XINCREF(innermost);
    BeginRecording(t_calls, shared ? shared_hook : &OnPythonCallsEvent, innermost);
    if (!shared) PyEval_SetProfile(&OnPythonCallsEvent, nullptr);
    traced = true;
  }
  traced = TraceRunningThreads(&OnPythonCallsEvent) > 0 || traced;
  traced = TraceThreadsStartedLater(&OnPythonCallsEvent) || traced;
  if (!traced) call_fn = nullptr;
  PyErr_Clear();
  PyGILState_Release(gil);
  return traced;
}

}  // namespace profsh_torch
