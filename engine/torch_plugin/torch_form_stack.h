// Python stacks in torch 1.13's form (with_stack="torch"), so that group_by_stack_n groups as
// torch's do. torch's Python tracer (profiler_python.cpp) keeps its own stack from a profile
// function's call and return events rather than reading frames, so:
//  - a function called while recording is shown at the line it was entered at: its `def` line
//    (co_firstlineno, the decorator's line for a decorated one), a resumed generator's yield;
//  - a frame already running when recording starts is shown at the line it was on then;
//  - C functions are frames of their own, named by their repr
//    ("<built-in method zeros of type object at 0x7f11d0f2d1e0>"); the first repr met for a C
//    function (its PyMethodDef) in a recording names all its calls, as torch caches it;
//  - module calls are "nn.Module: Name_N", numbered per class in the order they were entered.
// Like torch's tracer, it follows one thread: the one that imported torch (others' operators
// have no stack). Its cost is a profile function on that thread's every Python and C call, paid
// only when this form is asked for.
#pragma once

#include <Python.h>

#include <cstdint>

namespace profsh_torch {

// Installs the profile function on the calling thread (which must be a Python thread; takes
// the GIL). `off_flag` is the collector's "nothing recorded" byte: a recording starts when it
// turns 0, and the running frames' lines are taken then.
void StartTorchFormStacks(const volatile uint8_t* off_flag);

// The profile function StartTorchFormStacks installs (the cpu activity's Python calls share it).
Py_tracefunc TorchFormHook();

// The calling thread's stack in torch's form, innermost first; 0 on any thread but the traced
// one, or when another profile function (sys.setprofile, torch's own profiler) replaced ours.
uint32_t TorchFormStack();

// Called after an operator began: a recording that this operator started takes its lines now.
void NoteRecordingState();

}  // namespace profsh_torch
