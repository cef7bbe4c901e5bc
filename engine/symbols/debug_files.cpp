#include "engine/symbols/debug_files.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdlib>

namespace profsh::symbols {
namespace {

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

// .gnu_debuglink's checksum: CRC-32 (zlib's) of the whole debug file.
bool CrcMatches(const std::string& path, uint32_t expected) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  uLong crc = crc32(0, nullptr, 0);
  unsigned char buffer[1 << 16];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0)
    crc = crc32(crc, buffer, static_cast<uInt>(n));
  ::close(fd);
  return n == 0 && static_cast<uint32_t>(crc) == expected;
}

}  // namespace

std::string DefaultDebuginfodCache() {
  if (const char* path = std::getenv("DEBUGINFOD_CACHE_PATH"); path != nullptr && *path) {
    return path;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg) {
    return std::string(xdg) + "/debuginfod_client";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home) {
    return std::string(home) + "/.cache/debuginfod_client";
  }
  return {};
}

std::string FindDebugFile(const ElfFile& file, const DebugSearch& search) {
  const std::string& id = file.build_id();
  auto matches_build_id = [&id](const std::string& candidate) {
    return IsRegularFile(candidate) && ReadBuildId(candidate) == id;
  };
  if (id.size() > 2) {
    for (const std::string& root : search.roots) {
      const std::string candidate =
          root + "/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug";
      if (matches_build_id(candidate)) return candidate;
    }
    if (!search.debuginfod_cache.empty()) {
      const std::string candidate = search.debuginfod_cache + "/" + id + "/debuginfo";
      if (matches_build_id(candidate)) return candidate;
    }
  }
  GElf_Word crc = 0;
  const char* link = dwelf_elf_gnu_debuglink(file.elf(), &crc);
  if (link == nullptr || *link == '\0' ||
      std::string_view(link).find('/') != std::string_view::npos) {
    return {};
  }
  const std::string& path = file.path();
  const std::string dir = path.substr(0, path.rfind('/'));
  std::vector<std::string> candidates = {dir + "/" + link, dir + "/.debug/" + link};
  for (const std::string& root : search.roots) candidates.push_back(root + dir + "/" + link);
  for (const std::string& candidate : candidates) {
    if (!IsRegularFile(candidate) || SameFile(candidate, path)) continue;
    if (id.empty() ? CrcMatches(candidate, crc) : ReadBuildId(candidate) == id) return candidate;
  }
  return {};
}

}  // namespace profsh::symbols
