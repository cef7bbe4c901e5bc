// The files behind mappings, each opened once per (path, build id) and kept open: a mapping
// whose recorded build id differs from the file's now (the file was replaced since the process
// mapped it) gets no file, so no wrong names come from it. "[vdso]" is this process's own vDSO
// (the processes sampled run on this kernel).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/symbols/address_space.h"
#include "engine/symbols/elf_file.h"

namespace profsh::symbols {

class ModuleFiles {
 public:
  // Null for mappings without a readable ELF file behind them.
  const ElfFile* Get(const Mapping& mapping);
  size_t opened() const { return opened_; }

 private:
  // path -> (build id the mapping gave, file); looked up by path without building a key, as
  // the unwinder asks once per frame.
  std::unordered_map<std::string, std::vector<std::pair<std::string, std::unique_ptr<ElfFile>>>>
      files_;
  std::unique_ptr<ElfFile> vdso_;
  bool vdso_tried_ = false;
  size_t opened_ = 0;
};

// The basename of a mapping's path ("[vdso]" stays as it is).
std::string ModuleName(const std::string& path);

}  // namespace profsh::symbols
