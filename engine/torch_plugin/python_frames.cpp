// Torch ops usually run with the GIL released (the Python bindings drop it), so stacks are read
// from this thread's interpreter frames directly (CPython 3.11's frame layout), the way sampling
// profilers read them: the frames belong to this thread, which is below them in C code, so they
// cannot change while we read. Nothing is created or reference-counted: code objects' names, and
// for module calls `self` and its type's name, which live at least as long as the frame.
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

// "nn.Module: Linear_0": the class name and the index of the instance among its class's, in the
// order they are first met. `self` is the first local of Module._call_impl.
std::string ModuleEntry(_PyInterpreterFrame* f) {
  PyObject* self = f->localsplus[0];
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

// sys.path entries, longest first. Read with the GIL (the plugin is loaded from Python).
void LoadPathPrefixes() {
  std::vector<std::string>& prefixes = TheCaches().path_prefixes;
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
  const std::string& file = CodeFile(code);
  return CodeName(code) == "_call_impl" && file.size() >= 20 &&
         file.compare(file.size() - 20, 20, "nn/modules/module.py") == 0;
}

std::string ModuleClassName(PyObject* self) {
  const char* cls = Py_TYPE(self)->tp_name;
  const char* dot = std::strrchr(cls, '.');
  return dot ? dot + 1 : cls;
}

uint32_t ExecutingLineStack() {
  PyThreadState* ts = PyGILState_GetThisThreadState();  // no GIL needed; null: not a Python thread
  if (ts == nullptr || ts->cframe == nullptr) return 0;
  std::lock_guard<std::mutex> lock(g_python_mutex);
  std::string stack;
  for (_PyInterpreterFrame* f = ts->cframe->current_frame; f != nullptr; f = f->previous) {
    if (_PyFrame_IsIncomplete(f)) continue;
    PyCodeObject* code = f->f_code;
    std::string entry;
    if (IsModuleCall(code)) {
      entry = ModuleEntry(f);
    } else {
      int line = PyCode_Addr2Line(
          code, _PyInterpreterFrame_LASTI(f) * static_cast<int>(sizeof(_Py_CODEUNIT)));
      entry = CodeFile(code) + "(" + std::to_string(line) + "): " + CodeName(code);
    }
    if (entry.empty()) continue;
    if (!stack.empty()) stack += ';';
    stack += entry;
  }
  return stack.empty() ? 0 : Intern(stack);
}

}  // namespace profsh_torch
