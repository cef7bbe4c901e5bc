// The cpu activity's samples file (stream_format.h kSamplesFile) as the session reader reads it:
// blocks of clock, configuration, tasks, mappings, samples and drops, each sample unwound and
// symbolised in the address space its blocks built, then the analyses over the samples. An
// input without the stream's magic is taken as the blocks after a valid file header, so that the
// fuzzer spends its time inside blocks.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/session/sample_reader.h"
#include "engine/stream/stream_codec.h"
#include "engine/trace/trace_builder.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace profsh;
  std::string bytes;
  if (size < sizeof stream::kMagic || std::memcmp(data, stream::kMagic, sizeof stream::kMagic)) {
    const stream::FileHeader h = stream::MakeFileHeader();
    bytes.assign(reinterpret_cast<const char*>(&h), sizeof h);
  }
  bytes.append(reinterpret_cast<const char*>(data), size);
  const char* dir = std::getenv("TMPDIR");
  const std::string path = std::string(dir != nullptr && *dir ? dir : "/tmp") +
                           "/profsh-fuzz-samples-" + std::to_string(getpid()) + ".psamples";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  {
    Trace trace;
    TraceBuilder builder(trace);
    SessionSummary summary;
    std::vector<std::string> warnings;
    // Half the inputs as a process recorded throughout, half as one cut to a window.
    std::vector<RecordingWindow> windows;
    if (size > 0 && (data[size - 1] & 1)) windows.push_back({0, 0, INT64_MAX / 2, false});
    if (ReadCpuSamples(path, 0, windows, PythonCalls{}, builder, summary, warnings).ok() &&
        builder.Finish().ok())
      fuzz::Analyse(trace);
  }
  std::remove(path.c_str());
  return 0;
}
