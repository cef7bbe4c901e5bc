// The memory map of one sampled process: which file (and where in it) backs each address.
// Built from /proc/PID/maps text at attach time and updated from mmap records
// (PERF_RECORD_MMAP2, or the collector's dlopen notices) while the process runs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/util/result.h"

namespace profsh::symbols {

struct Mapping {
  uint64_t start = 0;        // first address
  uint64_t end = 0;          // one past the last address
  uint64_t file_offset = 0;  // offset in `path` of `start`
  std::string path;          // file, or "[vdso]", "[anon]", "//anon", ... as the kernel names it
  std::string build_id;      // lower-case hex of NT_GNU_BUILD_ID; empty when not known yet
  bool executable = false;
};

class AddressSpace {
 public:
  // Parses /proc/PID/maps text; `origin` names the source in errors.
  static Result<AddressSpace> FromProcMaps(std::string_view text, std::string_view origin);

  // A later mapping replaces the parts of earlier ones it overlaps (as mmap does).
  void Add(Mapping mapping);
  // Null when no mapping holds the address.
  const Mapping* Find(uint64_t address) const;
  const std::vector<Mapping>& mappings() const { return mappings_; }
  // Fills the build ids left empty from the files' NT_GNU_BUILD_ID notes (files that cannot be
  // read keep theirs empty); returns how many mappings gained one.
  size_t ReadMissingBuildIds();

 private:
  std::vector<Mapping> mappings_;  // sorted by start, not overlapping
};

// A mapping backed by a file that can be opened: an absolute path, not "[vdso]", perf's
// "//anon" nor a file deleted since it was mapped.
bool IsFilePath(std::string_view path);

}  // namespace profsh::symbols
