// The Python calls of every Python thread, recorded for the cpu activity (PROFSH_PYTHON_CALLS=1):
// every Python function's call and return is a level of its thread's collector stack
// (profsh_collector_python_call/_return), named as torch names its python_function events
// ("train.py(42): step": the file relative to sys.path, the function's first line, its name).
// When the samples are read back, a sample's Python stack is the calls open on its thread at its
// time (engine/session/sample_reader.h). The profile function (PyEval_SetProfile) follows calls
// and returns as torch's Python tracer does; a call costs a hash lookup of its code object (its
// name is interned once; the code object is kept alive so that its address never names another)
// and a ring write.
//
// Which threads: the one that imported torch from its running frames on; the threads running
// then, and those `threading` starts later, from their first Python event on
// (python_calls_threads.h). A thread with a profiler of the user's is left alone.
#pragma once

#include <Python.h>
#include <frameobject.h>

namespace profsh_torch {

// With the GIL or not (takes it). Starts recording on the calling thread, the running frames
// first (outermost first), and on the interpreter's other threads. `shared_hook`: the profile
// function already installed on the calling thread for torch-form stacks, which then also
// records its calls (one thread has one profile function); null when none. Leaves a profiler of
// the user's alone (and says so). Returns whether calls are recorded on some thread.
bool StartPythonCalls(Py_tracefunc shared_hook);

// Whether calls are recorded; the shared hook calls RecordPythonEvent when they are.
bool PythonCallsOn();
// With the GIL, from the shared profile function: a PyTrace_CALL or PyTrace_RETURN of `frame`.
void RecordPythonEvent(PyFrameObject* frame, int what);
// From an operator's start, with or without the GIL: on a traced thread whose profile function
// was replaced, the calls still open end now and recording stops on that thread.
void CheckPythonCallsHook();

}  // namespace profsh_torch
