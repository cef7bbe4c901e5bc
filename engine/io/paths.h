// File names the commands choose for the user, and the files a folder or pattern names.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/util/result.h"

namespace profsh {

// `path` made absolute against the current folder (unchanged if it is absolute already, or if
// the current folder cannot be read).
std::string AbsolutePath(const std::string& path);

// "<stem>-YYYYmmdd-HHMMSS.profsh" in the current folder, with "-2", "-3"... added when that name
// is taken.
std::string NewTracePath(const std::string& stem);

// The files of a folder whose names `wanted` accepts, or a glob pattern's matches, sorted. An
// empty folder is an error "<folder>: <none_in_folder>"; a pattern matching nothing is one
// naming it.
Result<std::vector<std::string>> FilesOfFolderOrGlob(
    const std::string& dir_or_glob, const std::function<bool(const std::string& name)>& wanted,
    const std::string& none_in_folder);

}  // namespace profsh
