// Bytes of a trace file, whatever its compression. Plain files are memory-mapped and handed to the
// importer whole (no copy); gzip files are inflated chunk by chunk so that a trace is never held
// decompressed in memory as a whole.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "engine/util/result.h"

namespace profsh {

class InputSource {
 public:
  virtual ~InputSource() = default;

  // The whole content when it is available without copying (plain files), else empty.
  virtual std::string_view WholeContent() const { return {}; }
  // Fills dst with up to max bytes; returns 0 at the end of the data.
  virtual Result<size_t> Read(char* dst, size_t max) = 0;
  // Tells a source that the bytes of WholeContent() before `offset` will not be read again, so
  // that a mapped file's pages can leave memory as a streaming reader moves past them.
  virtual void ReleaseBefore(size_t /*offset*/) {}
  // The first bytes of the (decompressed) content, for format detection. Does not consume them.
  virtual std::string_view Head() const = 0;
  // Bytes of the file on disk (compressed size for gzip).
  virtual size_t FileSize() const = 0;
  // A hint for how large the decompressed content is; 0 when unknown.
  virtual size_t ContentSizeHint() const = 0;
  virtual bool compressed() const { return false; }
  // A compressed file cut short (a writer killed mid-write) is an error at the cut, unless the
  // reader keeps what came before it (the JSON importer does): then Read() ends at the cut and
  // CutShort() says where it was; empty when the data was whole.
  virtual void KeepDataBeforeCut() {}
  virtual std::string CutShort() const { return {}; }
  const std::string& path() const { return path_; }

 protected:
  explicit InputSource(std::string path) : path_(std::move(path)) {}

 private:
  std::string path_;
};

// Opens `path`; errors name the file and say what is wrong with it (missing, a directory,
// unreadable, empty, a gzip header that is not one).
Result<std::unique_ptr<InputSource>> OpenInput(const std::string& path);

// An in-memory source, for tests and for data that is already in memory.
std::unique_ptr<InputSource> MemoryInput(std::string name, std::string content);

}  // namespace profsh
