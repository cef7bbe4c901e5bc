// Importers turn a file's bytes into a Trace. Each format registers one Importer; the registry
// picks the first whose CanRead() accepts the file's first (decompressed) bytes, so formats are
// detected from content, never from file names. Opening any trace (files, session folders and
// streams) is engine/load's job: it registers these importers and the session layer's.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/io/input_source.h"
#include "engine/trace/trace.h"
#include "engine/util/result.h"

namespace profsh {

class Importer {
 public:
  virtual ~Importer() = default;
  virtual std::string_view name() const = 0;
  virtual bool CanRead(std::string_view head) const = 0;
  virtual Result<std::unique_ptr<Trace>> Read(InputSource& input) const = 0;
};

class ImporterRegistry {
 public:
  void Register(std::unique_ptr<Importer> importer);
  const Importer* Find(std::string_view head) const;
  std::vector<std::string_view> names() const;

 private:
  std::vector<std::unique_ptr<Importer>> importers_;
};

std::unique_ptr<Importer> MakeJsonTraceImporter();
std::unique_ptr<Importer> MakeProfshFormatImporter();
// Registers the file formats of this layer (Kineto/Chrome JSON, the profsh format).
void RegisterFileImporters(ImporterRegistry& registry);

}  // namespace profsh
