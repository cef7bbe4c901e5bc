// Torch ops usually run with the GIL released (the Python bindings drop it), so reading the
// stack takes it back (PyGILState_Ensure) and walks the frames with the public frame API
// (PyThreadState_GetFrame, PyFrame_GetBack, PyFrame_GetCode, PyFrame_GetLineNumber), which hands
// out references that are given back at once: the frames belong to this thread, which is below
// them in C code, so they stay alive while we read.
#include "engine/torch_plugin/python_frames.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <vector>

namespace profsh_torch {

std::mutex g_python_mutex;

namespace {

// Function statics: the plugin's start-up (operator_source.cpp's static object) may run before
// this file's globals would be constructed.
struct Caches {
  std::vector<std::string> path_prefixes;
  PyObject* module_call_code = nullptr;  // torch.nn.Module.__call__.__code__ (a reference kept)
  std::unordered_map<PyCodeObject*, std::string> code_files;  // code -> "trimmed/file.py"
  std::unordered_map<PyCodeObject*, std::string> code_names;  // code -> function name
  // Module names of the executing-line form, keyed by the object's address as torch keys them
  // (a module created at the address of a freed one inherits its name).
  std::unordered_map<const void*, std::string> module_names;  // module object -> "Name_N"
  std::unordered_map<std::string, int> module_counts;
};
Caches& TheCaches() {
  static Caches caches;
  return caches;
}

// A str's UTF-8 text from the fields CPython's public header gives (compact ASCII data, or the
// UTF-8 form once made), without creating anything, so that it needs no GIL.
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

// "nn.Module: Linear_0": the class name and the index of the instance among its class's, in the
// order they are first met.
std::string ModuleEntry(PyFrameObject* frame) {
  PyObject* self = FrameSelf(frame);
  if (self == nullptr) return "";
  Caches& c = TheCaches();
  auto it = c.module_names.find(self);
  if (it == c.module_names.end()) {
    std::string name = ModuleClassName(self);
    int n = c.module_counts[name]++;
    it = c.module_names.emplace(self, name + "_" + std::to_string(n)).first;
  }
  return "nn.Module: " + it->second;
}

}  // namespace

void LoadPythonNames() {
  Caches& c = TheCaches();
  std::vector<std::string>& prefixes = c.path_prefixes;
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject* path = PySys_GetObject("path");  // borrowed
  if (path != nullptr && PyList_Check(path)) {
    for (Py_ssize_t i = 0; i < PyList_Size(path); ++i) {
      PyObject* item = PyList_GetItem(path, i);
      if (!PyUnicode_Check(item)) continue;
      const char* s = PyUnicode_AsUTF8(item);
      if (s && *s)
        prefixes.emplace_back(std::string(s) + (s[std::strlen(s) - 1] == '/' ? "" : "/"));
    }
  }
  // torch is imported already (the hook loads the plugin right after), so this runs nothing new.
  if (PyObject* nn = PyImport_ImportModule("torch.nn")) {
    if (PyObject* module = PyObject_GetAttrString(nn, "Module")) {
      if (PyObject* call = PyObject_GetAttrString(module, "__call__")) {
        c.module_call_code = PyObject_GetAttrString(call, "__code__");
        Py_DECREF(call);
      }
      Py_DECREF(module);
    }
    Py_DECREF(nn);
  }
  PyErr_Clear();
  PyGILState_Release(gil);
  std::sort(prefixes.begin(), prefixes.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

const std::string& CodeFile(PyCodeObject* code) {
  Caches& c = TheCaches();
  auto it = c.code_files.find(code);
  if (it != c.code_files.end()) return it->second;
  std::string file = StrText(code->co_filename);
  for (const std::string& p : c.path_prefixes) {
    if (file.compare(0, p.size(), p) == 0) {
      file = file.substr(p.size());
      break;
    }
  }
  return c.code_files.emplace(code, std::move(file)).first->second;
}

const std::string& CodeName(PyCodeObject* code) {
  Caches& c = TheCaches();
  auto it = c.code_names.find(code);
  if (it != c.code_names.end()) return it->second;
  return c.code_names.emplace(code, StrText(code->co_name)).first->second;
}

bool IsModuleCall(PyCodeObject* code) {
  return code != nullptr && reinterpret_cast<PyObject*>(code) == TheCaches().module_call_code;
}

PyObject* FrameSelf(PyFrameObject* frame) {
#if PY_VERSION_HEX >= 0x030C0000
  PyObject* self = PyFrame_GetVarString(frame, "self");  // a new reference
  if (self == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  Py_DECREF(self);  // the frame's local keeps it
  return self;
#elif PY_VERSION_HEX >= 0x030B0000
  // 3.11 has no public access to one local: the frame's locals dict (made once per frame,
  // refreshed on each call) holds it.
  PyObject* locals = PyFrame_GetLocals(frame);  // a new reference
  if (locals == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  PyObject* self = PyDict_Check(locals) ? PyDict_GetItemString(locals, "self") : nullptr;
  Py_DECREF(locals);  // the frame keeps its dict
  return self;
#else
  // 3.9 and 3.10 define the frame object in their public header: `self` is the first local.
  return frame->f_localsplus[0];
#endif
}

std::string ModuleClassName(PyObject* self) {
  const char* cls = Py_TYPE(self)->tp_name;
  const char* dot = std::strrchr(cls, '.');
  return dot ? dot + 1 : cls;
}

uint32_t ExecutingLineStack() {
  // Null on a thread that never ran Python (torch's own pools): nothing to read, and no thread
  // state is made for it.
  if (PyGILState_GetThisThreadState() == nullptr || !Py_IsInitialized()) return 0;
#if PY_VERSION_HEX >= 0x030D0000
  if (Py_IsFinalizing()) return 0;
#endif
  PyGILState_STATE gil = PyGILState_Ensure();
  // An operator may run while the thread holds the GIL with an exception set: it is kept.
#if PY_VERSION_HEX >= 0x030C0000
  PyObject* pending = PyErr_GetRaisedException();
#else
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
#endif
  std::string stack;
  {
    std::lock_guard<std::mutex> lock(g_python_mutex);
    PyFrameObject* frame = PyThreadState_GetFrame(PyThreadState_Get());  // a new reference
    while (frame != nullptr) {
      PyCodeObject* code = PyFrame_GetCode(frame);  // a new reference
      std::string entry;
      if (IsModuleCall(code)) {
        entry = ModuleEntry(frame);
      } else {
        entry = CodeFile(code) + "(" + std::to_string(PyFrame_GetLineNumber(frame)) +
                "): " + CodeName(code);
      }
      Py_DECREF(code);
      if (!entry.empty()) {
        if (!stack.empty()) stack += ';';
        stack += entry;
      }
      PyFrameObject* back = PyFrame_GetBack(frame);  // a new reference, or null
      Py_DECREF(frame);
      frame = back;
    }
  }
  PyErr_Clear();
#if PY_VERSION_HEX >= 0x030C0000
  PyErr_SetRaisedException(pending);
#else
  PyErr_Restore(type, value, traceback);
#endif
  PyGILState_Release(gil);
  return stack.empty() ? 0 : Intern(stack);
}

}  // namespace profsh_torch
