// The files behind mappings, each opened once per (path, build id) and kept open: a mapping
// whose recorded build id differs from the file's now (the file was replaced since the process
// mapped it) gets no file, so no wrong names come from it.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include "engine/symbols/address_space.h"
#include "engine/symbols/elf_file.h"

namespace profsh::symbols {

class ModuleFiles {
 public:
  // Null for mappings without a readable ELF file behind them.
  const ElfFile* Get(const Mapping& mapping);
  size_t opened() const { return opened_; }

 private:
  std::unordered_map<std::string, std::unique_ptr<ElfFile>> files_;
  size_t opened_ = 0;
};

// The basename of a mapping's path ("[vdso]" stays as it is).
std::string ModuleName(const std::string& path);

}  // namespace profsh::symbols
