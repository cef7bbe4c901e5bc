#include "engine/importers/importer.h"

#include <sys/stat.h>

#include "engine/importers/session_reader.h"

namespace profsh {

ImporterRegistry& ImporterRegistry::Instance() {
  static ImporterRegistry* registry = [] {
    auto* r = new ImporterRegistry();
    r->Register(MakeProfshFormatImporter());
    r->Register(MakeJsonTraceImporter());
    r->Register(MakeStreamImporter());
    return r;
  }();
  return *registry;
}

void ImporterRegistry::Register(std::unique_ptr<Importer> importer) {
  importers_.push_back(std::move(importer));
}

const Importer* ImporterRegistry::Find(std::string_view head) const {
  for (const auto& importer : importers_) {
    if (importer->CanRead(head)) return importer.get();
  }
  return nullptr;
}

std::vector<std::string_view> ImporterRegistry::names() const {
  std::vector<std::string_view> out;
  for (const auto& importer : importers_) out.push_back(importer->name());
  return out;
}

Result<std::unique_ptr<Trace>> LoadTraceFrom(InputSource& input) {
  const Importer* importer = ImporterRegistry::Instance().Find(input.Head());
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
  // A folder is a recording session: one stream per process.
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
