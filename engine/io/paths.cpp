#include "engine/io/paths.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <ctime>

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

}  // namespace profsh
