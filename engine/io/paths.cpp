#include "engine/io/paths.h"

#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <ctime>
#include <filesystem>

namespace profsh {

std::string AbsolutePath(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) == nullptr) return path;
  std::string absolute = cwd;
  absolute += '/';
  absolute += path;
  return absolute;
}

std::string NewTracePath(const std::string& stem) {
  char stamp[64];
  std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  const std::string base = stem + "-" + stamp;
  std::string path = base + ".profsh";
  struct stat st;
  for (int n = 2; stat(path.c_str(), &st) == 0; ++n)
    path = base + "-" + std::to_string(n) + ".profsh";
  return path;
}

Result<std::vector<std::string>> FilesOfFolderOrGlob(
    const std::string& dir_or_glob, const std::function<bool(const std::string& name)>& wanted,
    const std::string& none_in_folder) {
  std::vector<std::string> paths;
  struct stat st {};
  if (stat(dir_or_glob.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir_or_glob, ec)) {
      if (wanted(entry.path().filename().string())) paths.push_back(entry.path().string());
    }
    if (ec) return Error{dir_or_glob + ": " + ec.message()};
    if (paths.empty()) return Error{dir_or_glob + ": " + none_in_folder};
  } else {
    glob_t g{};
    if (glob(dir_or_glob.c_str(), 0, nullptr, &g) == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) paths.emplace_back(g.gl_pathv[i]);
    }
    globfree(&g);
    if (paths.empty()) return Error{dir_or_glob + ": no such folder, and no file matches it"};
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

}  // namespace profsh
