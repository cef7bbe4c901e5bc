#include "engine/importers/importer.h"

namespace profsh {

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

void RegisterFileImporters(ImporterRegistry& registry) {
  registry.Register(MakeProfshFormatImporter());
  registry.Register(MakeJsonTraceImporter());
}

}  // namespace profsh
