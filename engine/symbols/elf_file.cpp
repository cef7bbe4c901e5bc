#include "engine/symbols/elf_file.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

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
  // A mapping's path may name anything by now (a FIFO, a device): without O_NONBLOCK opening a
  // FIFO waits for a writer forever. Only a regular file is read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return nullptr;
  }
  std::unique_ptr<ElfFile> file(new ElfFile());
  file->fd_ = fd;
  file->path_ = path;
  file->elf_ = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (!file->Load()) return nullptr;
  return file;
}

std::unique_ptr<ElfFile> ElfFile::OpenOwnVdso() {
  if (!InitLibelf()) return nullptr;
  const auto* base = reinterpret_cast<const char*>(getauxval(AT_SYSINFO_EHDR));
  if (base == nullptr) return nullptr;
  // The image ends with its section headers (the kernel builds it so); bounded for safety.
  const auto* ehdr = reinterpret_cast<const Elf64_Ehdr*>(base);
  if (std::memcmp(ehdr->e_ident, ELFMAG, SELFMAG) != 0 || ehdr->e_ident[EI_CLASS] != ELFCLASS64) {
    return nullptr;
  }
  const uint64_t size = ehdr->e_shoff + uint64_t{ehdr->e_shnum} * ehdr->e_shentsize;
  if (size < sizeof(Elf64_Ehdr) || size > (1u << 20)) return nullptr;
  std::unique_ptr<ElfFile> file(new ElfFile());
  file->path_ = "[vdso]";
  // libelf reads a private copy: the mapped vDSO is not writable, and libelf may write.
  file->image_.assign(base, base + size);
  file->elf_ = elf_memory(file->image_.data(), file->image_.size());
  if (!file->Load()) return nullptr;
  return file;
}

bool ElfFile::Load() {
  if (elf_ == nullptr || elf_kind(elf_) != ELF_K_ELF) return false;
  GElf_Ehdr ehdr;
  if (gelf_getehdr(elf_, &ehdr) == nullptr) return false;
  is_dyn_ = ehdr.e_type == ET_DYN;
  size_t phnum = 0;
  if (elf_getphdrnum(elf_, &phnum) == 0) {
    for (size_t i = 0; i < phnum; ++i) {
      GElf_Phdr phdr;
      if (gelf_getphdr(elf_, static_cast<int>(i), &phdr) == nullptr) continue;
      if (phdr.p_type != PT_LOAD) continue;
      segments_.push_back({phdr.p_offset, phdr.p_vaddr, phdr.p_filesz});
    }
  }
  const void* id = nullptr;
  const ssize_t id_size = dwelf_elf_gnu_build_id(elf_, &id);
  if (id_size > 0) build_id_ = HexOf(id, static_cast<size_t>(id_size));
  return true;
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
