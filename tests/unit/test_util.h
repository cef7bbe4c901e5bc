// Helpers shared by the unit tests.
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "engine/io/input_source.h"
#include "engine/load/trace_loader.h"

namespace profsh::testing {

// Hands its content out a few bytes at a time and never as a whole, like an inflating gzip
// stream, so that the importer's rollback-and-refill path runs on every unit boundary.
class TrickleInput final : public InputSource {
 public:
  TrickleInput(std::string content, size_t chunk)
      : InputSource("trickle.json"), content_(std::move(content)), chunk_(chunk) {}
  Result<size_t> Read(char* dst, size_t max) override {
    size_t n = std::min({max, chunk_, content_.size() - offset_});
    std::memcpy(dst, content_.data() + offset_, n);
    offset_ += n;
    return n;
  }
  std::string_view Head() const override { return std::string_view(content_).substr(0, 4096); }
  size_t FileSize() const override { return content_.size(); }
  size_t ContentSizeHint() const override { return 0; }

 private:
  std::string content_;
  size_t chunk_;
  size_t offset_ = 0;
};

inline Result<std::unique_ptr<Trace>> ImportString(const std::string& json) {
  auto input = MemoryInput("test.json", json);
  return LoadTraceFrom(*input);
}

inline std::unique_ptr<Trace> MustImport(const std::string& json) {
  auto r = ImportString(json);
  if (!r.ok()) throw std::runtime_error(r.error().message);
  return std::move(r.value());
}

// The stream codec's sink over a string (engine/stream/stream_codec.h).
struct CodecSink {
  std::string bytes;
  size_t used = 0;
  uint8_t* Room(size_t n) {
    if (bytes.size() < used + n) bytes.resize(used + n);
    return reinterpret_cast<uint8_t*>(bytes.data()) + used;
  }
  void Advance(size_t n) { used += n; }
  size_t size() const { return used; }
  uint8_t* At(size_t offset) { return reinterpret_cast<uint8_t*>(bytes.data()) + offset; }
  std::string_view view() const { return std::string_view(bytes).substr(0, used); }
  std::string str() const { return bytes.substr(0, used); }
};

std::string TempPath(const std::string& name);
// The trace as the Chrome exporter writes it.
std::string ExportText(const Trace& t);

}  // namespace profsh::testing
