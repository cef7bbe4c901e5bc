#include "engine/symbols/module_files.h"

namespace profsh::symbols {

const ElfFile* ModuleFiles::Get(const Mapping& mapping) {
  if (!IsFilePath(mapping.path)) return nullptr;
  std::string key = mapping.path;
  key.push_back('\0');
  key += mapping.build_id;
  auto it = files_.find(key);
  if (it == files_.end()) {
    std::unique_ptr<ElfFile> file = ElfFile::Open(mapping.path);
    ++opened_;
    if (file && !mapping.build_id.empty() && file->build_id() != mapping.build_id) file.reset();
    it = files_.emplace(std::move(key), std::move(file)).first;
  }
  return it->second.get();
}

std::string ModuleName(const std::string& path) {
  if (path.empty()) return "[anon]";
  if (path.front() != '/') return path;
  return path.substr(path.rfind('/') + 1);
}

}  // namespace profsh::symbols
