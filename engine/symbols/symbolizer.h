// Names for code addresses: ELF symbol tables and DWARF debug info (the file's own, or a
// separate debug file found by build id under /usr/lib/debug/.build-id or in debuginfod's
// cache, or by .gnu_debuglink), C++ names demangled, inlined frames expanded. An address no
// symbol covers is named by module and offset ("libfoo.so+0x1234"), never dropped.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/symbols/address_space.h"

namespace profsh::symbols {

struct SourceFrame {
  std::string function;  // demangled; "libfoo.so+0x1234" when unknown
  std::string module;    // file name of the mapping (basename), "[unknown]" outside any
  uint64_t module_offset = 0;
  std::string file;  // source file when debug info has it, else empty
  uint32_t line = 0;
  bool inlined = false;  // an inlined call site inside the next (outer) frame
};

struct SymbolizerStats {
  uint64_t lookups = 0;
  uint64_t cache_hits = 0;
  uint64_t unnamed = 0;  // named by module + offset only
  uint64_t modules_opened = 0;
};

struct SymbolizerOptions {
  // Roots of separate debug files: ROOT/.build-id/xx/yyyy.debug, and ROOT/DIR/NAME for a file
  // in DIR whose .gnu_debuglink says NAME.
  std::vector<std::string> debug_roots = {"/usr/lib/debug"};
  // debuginfod's cache (BUILDID/debuginfo); empty: its default (DefaultDebuginfodCache()).
  std::string debuginfod_cache;
};

// Not thread-safe (its caches change on every call): one per decoding thread.
class Symbolizer {
 public:
  Symbolizer();
  explicit Symbolizer(SymbolizerOptions options);
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // The frames at `pc`, innermost (deepest inlined) first, the real function last; never
  // empty. `is_return_address` as UnwoundFrame's. Results are cached per (module, offset).
  std::vector<SourceFrame> Symbolize(const AddressSpace& space, uint64_t pc,
                                     bool is_return_address);
  const SymbolizerStats& stats() const { return stats_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  SymbolizerStats stats_;
};

}  // namespace profsh::symbols
