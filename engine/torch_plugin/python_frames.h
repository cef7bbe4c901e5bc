// Reading a CPython 3.11 thread's frames for operator stacks, in torch's "file(line): func"
// form, with "nn.Module: Name_N" for module calls. Used by both stack forms of the operator
// source: the executing line (ExecutingLineStack) and torch's (torch_form_stack.h).
#pragma once

#include <Python.h>
#include <frameobject.h>
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE

#include <cstdint>
#include <mutex>
#include <string>

namespace profsh_torch {

// The collector's string ids (defined in operator_source.cpp).
uint32_t Intern(const std::string& s);

// Guards the name caches below: operators of several threads read frames at once.
extern std::mutex g_python_mutex;

// Reads sys.path once (takes the GIL): file names are shown relative to its entries, as torch
// shows them.
void LoadPathPrefixes();

// With g_python_mutex held. A code object's file relative to sys.path, and its function name.
const std::string& CodeFile(PyCodeObject* code);
const std::string& CodeName(PyCodeObject* code);
// With g_python_mutex held. Whether `code` is torch.nn.Module's __call__ (_call_impl), the
// frame torch shows as "nn.Module: Name_N".
bool IsModuleCall(PyCodeObject* code);
// The class name of a module object ("Linear"), without creating anything.
std::string ModuleClassName(PyObject* self);

// The calling thread's Python stack, innermost first, each frame at the line it is executing;
// 0 when the thread runs no Python.
uint32_t ExecutingLineStack();

}  // namespace profsh_torch
