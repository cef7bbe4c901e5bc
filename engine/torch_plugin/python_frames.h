// Reading a Python thread's frames for operator stacks, in torch's "file(line): func" form,
// with "nn.Module: Name_N" for module calls. Used by both stack forms of the operator source:
// the executing line (ExecutingLineStack) and torch's (torch_form_stack.h). Only CPython's
// public API is used (no Py_BUILD_CORE internals), so one source builds for Python 3.9 to 3.13.
#pragma once

#include <Python.h>
#include <frameobject.h>

#include <cstdint>
#include <mutex>
#include <string>

namespace profsh_torch {

// The collector's string ids (defined in operator_source.cpp).
uint32_t Intern(const std::string& s);

// Guards the name caches below: operators of several threads read frames at once. Taken after
// the GIL where both are held, never the other way round.
extern std::mutex g_python_mutex;

// With the GIL (the plugin is loaded from Python): reads sys.path (file names are shown
// relative to its entries, as torch shows them) and torch.nn.Module.__call__'s code, the frame
// torch shows as "nn.Module: Name_N" (_call_impl in torch 1.x, _wrapped_call_impl in 2.x).
void LoadPythonNames();

// With g_python_mutex held. A code object's file relative to sys.path, and its function name.
const std::string& CodeFile(PyCodeObject* code);
const std::string& CodeName(PyCodeObject* code);
// Whether `code` is torch.nn.Module.__call__'s.
bool IsModuleCall(PyCodeObject* code);
// With the GIL. A frame's `self` (the module of a module call), valid while the frame runs;
// null when it has none.
PyObject* FrameSelf(PyFrameObject* frame);
// The class name of a module object ("Linear"), without creating anything.
std::string ModuleClassName(PyObject* self);

// The calling thread's Python stack, innermost first, each frame at the line it is executing;
// 0 when the thread runs no Python. Takes the GIL (torch's bindings release it around
// operators), so it is called only when stacks were asked for.
uint32_t ExecutingLineStack();

}  // namespace profsh_torch
