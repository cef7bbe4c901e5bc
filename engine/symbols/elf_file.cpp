#include "engine/symbols/elf_file.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

namespace profsh::symbols {
namespace {

// libelf needs its version set once per process before any elf_begin.
bool InitLibelf() {
  static const bool ok = elf_version(EV_CURRENT) != EV_NONE;
  return ok;
}

}  // namespace

std::string HexOf(const void* bytes, size_t size) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(size * 2);
  const auto* p = static_cast<const unsigned char*>(bytes);
  for (size_t i = 0; i < size; ++i) {
    hex.push_back(kDigits[p[i] >> 4]);
    hex.push_back(kDigits[p[i] & 15]);
  }
  return hex;
}

std::unique_ptr<ElfFile> ElfFile::Open(const std::string& path) {
  if (!InitLibelf()) return nullptr;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  std::unique_ptr<ElfFile> file(new ElfFile());
  file->fd_ = fd;
  file->path_ = path;
  file->elf_ = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (file->elf_ == nullptr || elf_kind(file->elf_) != ELF_K_ELF) return nullptr;
  GElf_Ehdr ehdr;
  if (gelf_getehdr(file->elf_, &ehdr) == nullptr) return nullptr;
  file->is_dyn_ = ehdr.e_type == ET_DYN;
  size_t phnum = 0;
  if (elf_getphdrnum(file->elf_, &phnum) == 0) {
    for (size_t i = 0; i < phnum; ++i) {
      GElf_Phdr phdr;
      if (gelf_getphdr(file->elf_, static_cast<int>(i), &phdr) == nullptr) continue;
      if (phdr.p_type != PT_LOAD) continue;
      file->segments_.push_back({phdr.p_offset, phdr.p_vaddr, phdr.p_filesz});
    }
  }
  const void* id = nullptr;
  const ssize_t id_size = dwelf_elf_gnu_build_id(file->elf_, &id);
  if (id_size > 0) file->build_id_ = HexOf(id, static_cast<size_t>(id_size));
  return file;
}

ElfFile::~ElfFile() {
  if (elf_ != nullptr) elf_end(elf_);
  if (fd_ >= 0) ::close(fd_);
}

std::optional<uint64_t> ElfFile::OffsetToAddress(uint64_t file_offset) const {
  for (const Segment& s : segments_) {
    if (file_offset >= s.offset && file_offset - s.offset < s.filesz) {
      return s.vaddr + (file_offset - s.offset);
    }
  }
  return std::nullopt;
}

std::optional<uint64_t> ElfFile::AddressToOffset(uint64_t address) const {
  for (const Segment& s : segments_) {
    if (address >= s.vaddr && address - s.vaddr < s.filesz) return s.offset + (address - s.vaddr);
  }
  return std::nullopt;
}

std::string ReadBuildId(const std::string& path) {
  const auto file = ElfFile::Open(path);
  return file ? file->build_id() : std::string();
}

}  // namespace profsh::symbols
