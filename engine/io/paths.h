// File names the commands choose for the user.
#pragma once

#include <string>

namespace profsh {

// `path` made absolute against the current folder (unchanged if it is absolute already, or if
// the current folder cannot be read).
std::string AbsolutePath(const std::string& path);

// "<stem>-YYYYmmdd-HHMMSS.profsh" in the current folder, with "-2", "-3"... added when that name
// is taken.
std::string NewTracePath(const std::string& stem);

}  // namespace profsh
