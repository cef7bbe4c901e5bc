// Every file profsh writes goes through this writer: bytes go to a temporary file next to the
// target, which is renamed over the target only once everything was written and synced. A crash
// or an error leaves either the old file or none, never a torn one. Paths ending in ".gz" are
// gzip-compressed on the way.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "engine/util/result.h"

namespace profsh {

class AtomicWriter {
 public:
  static Result<std::unique_ptr<AtomicWriter>> Create(const std::string& path);
  ~AtomicWriter();
  AtomicWriter(const AtomicWriter&) = delete;
  AtomicWriter& operator=(const AtomicWriter&) = delete;

  // Writes are buffered; the first failure is remembered and reported by Commit().
  void Write(std::string_view bytes) { Write(bytes.data(), bytes.size()); }
  void Write(const char* data, size_t size);
  // Flushes, syncs and renames into place.
  Status Commit();
  const std::string& path() const { return path_; }
  size_t bytes_written() const { return bytes_written_; }

 private:
  AtomicWriter(std::string path, std::string temp_path, int fd, bool gzip);
  void FlushBuffer();
  void WriteRaw(const char* data, size_t size);
  void Fail(const std::string& what);

  std::string path_;
  std::string temp_path_;
  int fd_;
  bool gzip_;
  bool committed_ = false;
  std::string error_;
  std::unique_ptr<char[]> buffer_;
  size_t buffered_ = 0;
  size_t bytes_written_ = 0;
  struct Deflater;
  std::unique_ptr<Deflater> deflater_;
};

// Whether a file can be written at `path` the way AtomicWriter writes it (its temporary file is
// created beside it and removed again): checked before hours of work whose result goes there.
Status CheckWritable(const std::string& path);

// Convenience for small files.
Status WriteFileAtomically(const std::string& path, std::string_view content);

}  // namespace profsh
