// The collector's C entry points for profsh's PyTorch operator source (libprofsh_torch.so),
// which is loaded into Python processes that import torch and finds these with dlsym: the
// collector stays free of libtorch, and the plugin writes into the same per-thread rings.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct profsh_op_info {
  uint32_t shapes;   // string id of the input shapes, as torch's "Input Dims" JSON ("[[2, 3], []]")
  uint32_t dtypes;   // string id of the input types, as torch's "Input type" JSON
  uint32_t stack;    // string id of the Python stack, innermost first, ';'-separated
  uint8_t scope;     // at::RecordScope
  int64_t sequence;  // autograd sequence number, -1 when none
  uint64_t forward_thread;  // for backward ops: the thread of their forward op
  uint64_t flops;
};

// A string id (with its step-marker and capture-range tags) for event names and attributes.
uint32_t profsh_collector_intern(const char* text, size_t length);
// Non-zero while nothing is recorded (outside a schedule's windows, paused...): the plugin
// skips building shapes and stacks then.
const volatile uint8_t* profsh_collector_off_flag(void);
// While the off flag has bit 5 set (no step marker has matched yet): a record_function range
// of this name was skipped; counted, to name candidates if the marker never matches.
void profsh_collector_count_name(uint32_t name);
// An operator begins on this thread; it ends with profsh_collector_op_end().
void profsh_collector_op_begin(uint32_t name, const struct profsh_op_info* info);
void profsh_collector_op_end(void);
// An allocation (bytes > 0) or a free (bytes < 0), from libprofsh_memory.so.
void profsh_collector_memory_event(uint64_t address, int64_t bytes);
// A Python function begins on this thread (name: its "file(line): function" string id), for the
// cpu activity's samples; it ends with profsh_collector_python_return(). They are levels of the
// thread's stack in the domain stream::kPythonCallsDomain, read back as the Python frames of the
// thread's samples (engine/session/sample_reader.h), not as ranges of the trace.
void profsh_collector_python_call(uint32_t name);
void profsh_collector_python_return(void);

#ifdef __cplusplus
}
#endif
