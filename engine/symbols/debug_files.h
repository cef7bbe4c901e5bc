// Where the debug info of a stripped file lives: a separate file found by build id
// (ROOT/.build-id/xx/yyyy.debug), in debuginfod's cache (never fetched: no network here),
// or by the file's .gnu_debuglink name beside it, in .debug/ beside it, or under ROOT.
#pragma once

#include <string>
#include <vector>

#include "engine/symbols/elf_file.h"

namespace profsh::symbols {

struct DebugSearch {
  std::vector<std::string> roots;  // e.g. /usr/lib/debug
  std::string debuginfod_cache;    // e.g. ~/.cache/debuginfod_client; empty: not searched
};

// debuginfod's own rule: $DEBUGINFOD_CACHE_PATH, else $XDG_CACHE_HOME/debuginfod_client, else
// $HOME/.cache/debuginfod_client.
std::string DefaultDebuginfodCache();

// The path of a separate debug file for `file` whose build id (or, for a file without one,
// debuglink CRC) matches; empty when there is none.
std::string FindDebugFile(const ElfFile& file, const DebugSearch& search);

}  // namespace profsh::symbols
