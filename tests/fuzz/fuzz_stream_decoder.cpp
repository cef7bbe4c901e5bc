// The session stream as the live reader sees it: the bytes arrive in pieces (the first input
// byte chooses their size), whole blocks are decoded as they complete, and the decoder is
// finished whatever state the stream is in. An input without the stream's magic is taken as
// the blocks after a valid file header, so that the fuzzer spends its time inside blocks.
#include <cstring>
#include <string>
#include <vector>

#include "engine/decoding/stream_decoder.h"
#include "engine/stream/stream_codec.h"
#include "engine/trace/trace_builder.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

class Sink final : public profsh::WindowSink {
 public:
  profsh::TraceBuilder& Open(const profsh::WindowInfo&, int64_t* origin_ns) override {
    traces_.push_back(std::make_unique<profsh::Trace>());
    builders_.push_back(std::make_unique<profsh::TraceBuilder>(*traces_.back()));
    *origin_ns = 0;
    return *builders_.back();
  }
  void Sealed(const profsh::WindowInfo&) override {
    if (builders_.back()->Finish().ok()) profsh::fuzz::Analyse(*traces_.back());
  }

 private:
  std::vector<std::unique_ptr<profsh::Trace>> traces_;
  std::vector<std::unique_ptr<profsh::TraceBuilder>> builders_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace profsh;
  if (size == 0) return 0;
  const size_t piece = 1 + data[0] % 64 * 37;
  std::string stream;
  if (size < 1 + sizeof stream::kMagic ||
      std::memcmp(data + 1, stream::kMagic, sizeof stream::kMagic) != 0) {
    const stream::FileHeader h = stream::MakeFileHeader();
    stream.assign(reinterpret_cast<const char*>(&h), sizeof h);
  }
  stream.append(reinterpret_cast<const char*>(data + 1), size - 1);
  Sink sink;
  SessionSummary summary;
  std::vector<std::string> warnings;
  StreamDecoder decoder("fuzz.pstream", sink, summary, warnings);
  size_t consumed = 0;
  for (size_t have = 0; have < stream.size();) {
    have = std::min(stream.size(), have + piece);
    auto used = decoder.Feed(std::string_view(stream).substr(consumed, have - consumed), consumed);
    if (!used.ok()) return 0;
    consumed += used.value();
  }
  decoder.Finish();
  return 0;
}
