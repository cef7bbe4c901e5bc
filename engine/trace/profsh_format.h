// profsh's own trace file: the columns and tables of a Trace written as they are in memory,
// little-endian, in tagged sections. Loading is a bounds-checked copy, no parsing.
//
//   header   : magic[8] "\x89PRFSH\r\n", u32 version, u32 flags, u64 section_count, u64 reserved
//   section  : u32 tag, u32 reserved, u64 payload_bytes, payload (padded to 8 bytes)
//
// Readers reject other versions with a message naming both; every id read from a file is
// checked against the table it points into before it is used.
#pragma once

#include <cstdint>

namespace profsh::format {

inline constexpr char kMagic[8] = {'\x89', 'P', 'R', 'F', 'S', 'H', '\r', '\n'};
inline constexpr uint32_t kVersion = 2;
inline constexpr uint32_t kFlagLittleEndian = 1;

constexpr uint32_t Tag(char a, char b, char c, char d) {
  return static_cast<uint32_t>(a) | (static_cast<uint32_t>(b) << 8) |
         (static_cast<uint32_t>(c) << 16) | (static_cast<uint32_t>(d) << 24);
}
inline constexpr uint32_t kTagInfo = Tag('I', 'N', 'F', 'O');  // origin, format, warnings
inline constexpr uint32_t kTagStrings = Tag('S', 'T', 'R', 'S');
inline constexpr uint32_t kTagCategories = Tag('C', 'A', 'T', 'S');
inline constexpr uint32_t kTagTracks = Tag('T', 'R', 'K', 'S');
inline constexpr uint32_t kTagMetadata = Tag('M', 'E', 'T', 'A');
inline constexpr uint32_t kTagArgs = Tag('A', 'R', 'G', 'S');
inline constexpr uint32_t kTagTemplates = Tag('T', 'M', 'P', 'L');  // name, track, kind, schema+1
inline constexpr uint32_t kTagLongDurations = Tag('L', 'D', 'U', 'R');  // (event, ns) pairs
inline constexpr uint32_t kTagEvents = Tag('E', 'V', 'T', 'S');  // ts, dur, template, args offset

}  // namespace profsh::format
