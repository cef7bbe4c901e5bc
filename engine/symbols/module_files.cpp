#include "engine/symbols/module_files.h"

namespace profsh::symbols {

const ElfFile* ModuleFiles::Get(const Mapping& mapping) {
  if (mapping.path == "[vdso]") {
    if (!vdso_tried_) {
      vdso_tried_ = true;
      vdso_ = ElfFile::OpenOwnVdso();
    }
    if (vdso_ && !mapping.build_id.empty() && vdso_->build_id() != mapping.build_id) return nullptr;
    return vdso_.get();
  }
  if (!IsFilePath(mapping.path)) return nullptr;
  auto& versions = files_[mapping.path];
  for (const auto& [build_id, file] : versions) {
    if (build_id == mapping.build_id) return file.get();
  }
  std::unique_ptr<ElfFile> file = ElfFile::Open(mapping.path);
  ++opened_;
  if (file && !mapping.build_id.empty() && file->build_id() != mapping.build_id) file.reset();
  versions.emplace_back(mapping.build_id, std::move(file));
  return versions.back().second.get();
}

std::string ModuleName(const std::string& path) {
  if (path.empty()) return "[anon]";
  if (path.front() != '/') return path;
  return path.substr(path.rfind('/') + 1);
}

}  // namespace profsh::symbols
