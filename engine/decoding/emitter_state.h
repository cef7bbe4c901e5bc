// What both emitters (the stream's CPU events as Kineto's, its GPU records) keep while they
// emit a process's stream: its clock and names, the process, and the inline argument values of
// the event being built.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/decoding/stream_clock.h"
#include "engine/decoding/stream_names.h"

namespace profsh {

// An event's inline argument values as TraceBuilder::AddEvent takes them: each value an
// AddInlineArg declared is two 32-bit words, the low one first.
inline void PushInlineInt(std::vector<uint32_t>& words, int64_t v) {
  words.push_back(static_cast<uint32_t>(v));
  words.push_back(static_cast<uint32_t>(static_cast<uint64_t>(v) >> 32));
}

inline void PushInlineDouble(std::vector<uint32_t>& words, double v) {
  int64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  PushInlineInt(words, bits);
}

class EmitterState {
 public:
  void SetPid(int64_t pid) { pid_ = pid; }

 protected:
  EmitterState(const TickClock& clock, const StreamNames& names) : clock_(clock), names_(names) {}

  const TickClock& clock_;
  const StreamNames& names_;
  int64_t pid_ = 0;
  std::vector<uint32_t> words_;  // the event being built's inline values
};

}  // namespace profsh
