#include "engine/torch_plugin/python_calls_threads.h"

#include <dlfcn.h>
#include <frameobject.h>

#include <cstdio>

namespace profsh_torch {
namespace {

// CPython's own per-thread setter (what PyEval_SetProfileAllThreads calls for each thread in
// 3.12+), exported by 3.9 to 3.13 but declared only in internal headers from 3.12 on, hence
// looked up. PyEval_SetProfileAllThreads itself is not used: it would replace a profiler of the
// user's on some thread, and the importing thread's hook.
using SetProfileFn = int (*)(PyThreadState*, Py_tracefunc, PyObject*);

Py_tracefunc g_hook = nullptr;
PyObject* g_thread_start = nullptr;  // the callable given to threading.setprofile; never released

int EventOf(PyObject* name) {
  static const struct {
    const char* name;
    int what;
  } kEvents[] = {{"call", PyTrace_CALL},
                 {"return", PyTrace_RETURN},
                 {"c_call", PyTrace_C_CALL},
                 {"c_return", PyTrace_C_RETURN},
                 {"c_exception", PyTrace_C_EXCEPTION}};
  if (!PyUnicode_Check(name)) return -1;
  for (const auto& e : kEvents)
    if (PyUnicode_CompareWithASCIIString(name, e.name) == 0) return e.what;
  return -1;
}

// A new thread's first profile event, through sys.setprofile's trampoline (threading's
// bootstrap set it with this callable): the C profile function replaces the trampoline, so
// this is entered once per thread, and it takes the event as its first.
PyObject* OnThreadStart(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  PyThreadState* ts = PyThreadState_Get();
  // Only as this thread's profiler (the trampoline's object is this callable), not when called
  // by anyone else.
  if (nargs == 3 && ts->c_profileobj == g_thread_start && PyFrame_Check(args[0])) {
    const int what = EventOf(args[1]);
    if (what >= 0) {
      // Drops the trampoline's reference to this callable; g_thread_start keeps it alive.
      PyEval_SetProfile(g_hook, nullptr);
      g_hook(nullptr, reinterpret_cast<PyFrameObject*>(args[0]), what, nullptr);
    }
  }
  PyErr_Clear();
  Py_RETURN_NONE;
}

PyMethodDef g_thread_start_def = {
    "profsh_python_calls",
    reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&OnThreadStart)), METH_FASTCALL,
    "profsh: records this thread's Python calls for the cpu activity's samples"};

}  // namespace

int TraceRunningThreads(Py_tracefunc hook) {
  PyThreadState* self = PyThreadState_Get();
  auto set_profile = reinterpret_cast<SetProfileFn>(dlsym(RTLD_DEFAULT, "_PyEval_SetProfile"));
  int traced = 0;
  int left_alone = 0;
  int others = 0;
  // The list changes only with the GIL held, but for threads made or deleted by C code without
  // it (PyThreadState_New/_Delete), as in CPython's own walk over it (PyEval_SetProfileAllThreads).
  for (PyThreadState* ts = PyInterpreterState_ThreadHead(PyThreadState_GetInterpreter(self));
       ts != nullptr; ts = PyThreadState_Next(ts)) {
    if (ts == self) continue;
    ++others;
    if (ts->c_profilefunc != nullptr) {
      ++left_alone;
    } else if (set_profile != nullptr) {
      // Setting another thread's profile function with the GIL held is what CPython's
      // all-threads setter does; the thread sees it at its next Python event.
      if (set_profile(ts, hook, nullptr) == 0)
        ++traced;
      else
        PyErr_Clear();
    }
  }
  if (left_alone > 0)
    std::fprintf(stderr,
                 "profsh: cpu: %d other Python thread(s) already have a Python profiler "
                 "(sys.setprofile); they are left alone and their samples get no Python frames\n",
                 left_alone);
  if (set_profile == nullptr && others > left_alone)
    std::fprintf(stderr,
                 "profsh: cpu: this Python has no _PyEval_SetProfile: the %d Python thread(s) "
                 "running before torch's import get no Python frames\n",
                 others - left_alone);
  return traced;
}

bool TraceThreadsStartedLater(Py_tracefunc hook) {
  PyObject* threading = PyImport_ImportModule("threading");
  if (threading == nullptr) {
    PyErr_Clear();
    return false;
  }
  // threading.getprofile() from Python 3.10 on; the variable it reads before.
  PyObject* current = PyObject_HasAttrString(threading, "getprofile")
                          ? PyObject_CallMethod(threading, "getprofile", nullptr)
                          : PyObject_GetAttrString(threading, "_profile_hook");
  bool installed = false;
  if (current == nullptr) {
    PyErr_Clear();
  } else if (current != Py_None) {
    std::fprintf(stderr,
                 "profsh: cpu: threading.setprofile has a profiler already; it is left alone and "
                 "the samples of threads started later get no Python frames\n");
  } else {
    g_hook = hook;
    if (g_thread_start == nullptr) g_thread_start = PyCFunction_New(&g_thread_start_def, nullptr);
    PyObject* r = g_thread_start == nullptr
                      ? nullptr
                      : PyObject_CallMethod(threading, "setprofile", "O", g_thread_start);
    installed = r != nullptr;
    Py_XDECREF(r);
    PyErr_Clear();
  }
  Py_XDECREF(current);
  Py_DECREF(threading);
  return installed;
}

}  // namespace profsh_torch
