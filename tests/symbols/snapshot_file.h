// Runs a test program of tests/symbols and reads the snapshot it took of itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/symbols/address_space.h"
#include "engine/symbols/stack_snapshot.h"

namespace profsh::symbols::testing {

struct CapturedSample {
  StackSnapshot snapshot;  // its stack points into `stack`
  std::vector<uint8_t> stack;
  std::string maps;
};

// A fresh folder under $TMPDIR, removed with everything in it when this goes away.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs `argv` (argv[0] a path) and fails the test unless it exits 0.
bool RunProgram(const std::vector<std::string>& argv);
// Reads snapshot_capture.h's file; an error message names what is wrong.
bool ReadCapturedSample(const std::string& path, CapturedSample* sample, std::string* error);
// The 1-based line of `marker` ("@cxx-sample") in a source file of tests/symbols.
uint32_t MarkerLine(const std::string& source, const std::string& marker);

}  // namespace profsh::symbols::testing
