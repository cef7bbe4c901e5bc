#include "engine/symbols/address_space.h"

#include <algorithm>
#include <charconv>

#include "engine/symbols/elf_file.h"

namespace profsh::symbols {
namespace {

bool ParseHex(std::string_view text, uint64_t* value) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value, 16);
  return ec == std::errc() && end == text.data() + text.size();
}

// The next space-separated field of `rest`, consumed from it.
std::string_view NextField(std::string_view* rest) {
  const size_t begin = rest->find_first_not_of(' ');
  if (begin == std::string_view::npos) {
    *rest = {};
    return {};
  }
  *rest = rest->substr(begin);
  const size_t end = rest->find(' ');
  const std::string_view field = rest->substr(0, end);
  *rest = end == std::string_view::npos ? std::string_view() : rest->substr(end);
  return field;
}

Error LineError(std::string_view origin, size_t line, std::string_view what,
                std::string_view text) {
  std::string shown(text.substr(0, 120));
  return Error{std::string(origin) + ":" + std::to_string(line) + ": " + std::string(what) +
               " in \"" + shown + "\""};
}

}  // namespace

Result<AddressSpace> AddressSpace::FromProcMaps(std::string_view text, std::string_view origin) {
  AddressSpace space;
  size_t line_number = 0;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    // start-end perms offset dev inode [path]; the path may hold spaces.
    std::string_view rest = line;
    const std::string_view range = NextField(&rest);
    const std::string_view perms = NextField(&rest);
    const std::string_view offset = NextField(&rest);
    const std::string_view device = NextField(&rest);
    const std::string_view inode = NextField(&rest);
    Mapping mapping;
    const size_t dash = range.find('-');
    if (dash == std::string_view::npos || !ParseHex(range.substr(0, dash), &mapping.start) ||
        !ParseHex(range.substr(dash + 1), &mapping.end)) {
      return LineError(origin, line_number, "address range is not START-END in hex", line);
    }
    if (mapping.end <= mapping.start) {
      return LineError(origin, line_number, "address range ends before it starts", line);
    }
    if (perms.size() != 4) {
      return LineError(origin, line_number, "permissions are not 4 characters (rwxp)", line);
    }
    if (!ParseHex(offset, &mapping.file_offset)) {
      return LineError(origin, line_number, "file offset is not hex", line);
    }
    if (device.find(':') == std::string_view::npos) {
      return LineError(origin, line_number, "device is not MAJOR:MINOR", line);
    }
    uint64_t inode_number = 0;
    if (inode.empty() ||
        std::from_chars(inode.data(), inode.data() + inode.size(), inode_number).ptr !=
            inode.data() + inode.size()) {
      return LineError(origin, line_number, "inode is not a number", line);
    }
    const size_t path_begin = rest.find_first_not_of(' ');
    if (path_begin != std::string_view::npos) {
      std::string_view path = rest.substr(path_begin);
      while (!path.empty() && (path.back() == '\r' || path.back() == ' ')) path.remove_suffix(1);
      mapping.path = std::string(path);
    }
    mapping.executable = perms[2] == 'x';
    space.Add(std::move(mapping));
  }
  return space;
}

void AddressSpace::Add(Mapping mapping) {
  if (mapping.end <= mapping.start) return;
  // The first mapping that ends after the new one starts: everything from there that begins
  // before the new end overlaps it.
  auto it = std::upper_bound(mappings_.begin(), mappings_.end(), mapping.start,
                             [](uint64_t address, const Mapping& m) { return address < m.end; });
  std::vector<Mapping> kept_pieces;
  auto first = it;
  while (it != mappings_.end() && it->start < mapping.end) {
    if (it->start < mapping.start) {  // the part before the new mapping stays
      Mapping head = *it;
      head.end = mapping.start;
      kept_pieces.push_back(std::move(head));
    }
    if (it->end > mapping.end) {  // and the part after it
      Mapping tail = *it;
      const bool file_backed = !tail.path.empty() && tail.path.front() != '[';
      if (file_backed) tail.file_offset += mapping.end - tail.start;
      tail.start = mapping.end;
      kept_pieces.push_back(std::move(tail));
    }
    ++it;
  }
  it = mappings_.erase(first, it);
  kept_pieces.push_back(std::move(mapping));
  std::sort(kept_pieces.begin(), kept_pieces.end(),
            [](const Mapping& a, const Mapping& b) { return a.start < b.start; });
  mappings_.insert(it, std::make_move_iterator(kept_pieces.begin()),
                   std::make_move_iterator(kept_pieces.end()));
}

const Mapping* AddressSpace::Find(uint64_t address) const {
  auto it = std::upper_bound(mappings_.begin(), mappings_.end(), address,
                             [](uint64_t a, const Mapping& m) { return a < m.start; });
  if (it == mappings_.begin()) return nullptr;
  --it;
  return address < it->end ? &*it : nullptr;
}

size_t AddressSpace::ReadMissingBuildIds() {
  size_t read = 0;
  std::string last_path, last_id;
  for (Mapping& m : mappings_) {
    if (!m.build_id.empty() || !IsFilePath(m.path)) continue;
    if (m.path != last_path) {
      last_path = m.path;
      last_id = ReadBuildId(m.path);
    }
    if (!last_id.empty()) {
      m.build_id = last_id;
      ++read;
    }
  }
  return read;
}

bool IsFilePath(std::string_view path) {
  // perf's mmap records name anonymous memory "//anon" (JIT code, say).
  return path.size() > 1 && path[0] == '/' && path[1] != '/' && !path.ends_with(" (deleted)");
}

}  // namespace profsh::symbols
