#include "engine/load/trace_loader.h"

#include <sys/stat.h>

#include "engine/session/session_reader.h"

namespace profsh {

const ImporterRegistry& TraceReaders() {
  static const ImporterRegistry* readers = [] {
    auto* r = new ImporterRegistry();
    RegisterFileImporters(*r);
    r->Register(MakeStreamImporter());
    return r;
  }();
  return *readers;
}

Result<std::unique_ptr<Trace>> LoadTraceFrom(InputSource& input) {
  const Importer* importer = TraceReaders().Find(input.Head());
  if (importer == nullptr) {
    return Error{input.path() +
                 ": not a trace profsh can read (expected Kineto/Chrome JSON, a JSON event "
                 "array, a profsh trace or stream; gzip-compressed or not)"};
  }
  auto trace = importer->Read(input);
  if (trace.ok()) {
    trace.value()->source_path = input.path();
    trace.value()->ReadProfshMetadata();
  }
  return trace;
}

Result<std::unique_ptr<Trace>> LoadTrace(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    auto session = LoadSession(path);
    if (!session.ok()) return session.error();
    return std::move(session.value().trace);
  }
  auto input = OpenInput(path);
  if (!input.ok()) return input.error();
  return LoadTraceFrom(*input.value());
}

}  // namespace profsh
