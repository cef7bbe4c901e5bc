// One ELF file opened for reading (libelf over a read-only mmap): its build id and the
// segments that map file offsets to the addresses its symbols and unwind tables use.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

typedef struct Elf Elf;

namespace profsh::symbols {

class ElfFile {
 public:
  // Null when the file cannot be opened or is not ELF.
  static std::unique_ptr<ElfFile> Open(const std::string& path);
  // The kernel's vDSO as this process has it (a copy of its image): the same code every
  // process on this kernel runs, so it unwinds and names the sampled processes' [vdso] frames.
  // Null when the kernel gives none.
  static std::unique_ptr<ElfFile> OpenOwnVdso();
  ~ElfFile();
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;

  Elf* elf() const { return elf_; }
  const std::string& path() const { return path_; }
  const std::string& build_id() const { return build_id_; }  // lower-case hex, or empty
  bool is_shared_object() const { return is_dyn_; }
  // The address (as the file's symbols and CFI name it) of the byte at `file_offset` in a
  // loaded segment; nothing when no PT_LOAD covers it.
  std::optional<uint64_t> OffsetToAddress(uint64_t file_offset) const;
  // The inverse, for naming an address by module offset.
  std::optional<uint64_t> AddressToOffset(uint64_t address) const;

 private:
  ElfFile() = default;
  bool Load();  // reads the headers of elf_
  struct Segment {
    uint64_t offset, vaddr, filesz;
  };
  int fd_ = -1;
  Elf* elf_ = nullptr;
  std::string path_;
  std::string build_id_;
  bool is_dyn_ = false;
  std::vector<Segment> segments_;
  std::vector<char> image_;  // the bytes elf_ reads, when it is not a file
};

// The build id of the file at `path` (lower-case hex), empty when it has none or cannot be
// read.
std::string ReadBuildId(const std::string& path);
std::string HexOf(const void* bytes, size_t size);

}  // namespace profsh::symbols
