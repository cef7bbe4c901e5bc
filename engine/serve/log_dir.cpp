#include "engine/serve/log_dir.h"

#include <sys/stat.h>
#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <tuple>

namespace profsh::serve {

namespace {

namespace fs = std::filesystem;

constexpr const char* kTraceSuffixes[] = {".pt.trace.json", ".pt.trace.json.gz"};

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

bool IsTraceFileName(const std::string& name) {
  for (const char* suffix : kTraceSuffixes)
    if (EndsWith(name, suffix) && name.size() > std::strlen(suffix)) return true;
  return false;
}

void SplitWorkerSpan(const std::string& name, std::string* worker, std::string* span) {
  std::string stem = name;
  for (const char* suffix : kTraceSuffixes)
    if (EndsWith(stem, suffix)) stem.resize(stem.size() - std::strlen(suffix));
  size_t dot = stem.rfind('.');
  bool digits = dot != std::string::npos && dot + 1 < stem.size() &&
                std::all_of(stem.begin() + static_cast<long>(dot) + 1, stem.end(),
                            [](unsigned char c) { return std::isdigit(c); });
  *worker = digits ? stem.substr(0, dot) : stem;
  *span = digits ? stem.substr(dot + 1) : "";
}

std::vector<Run> ScanLogDir(const std::string& root) {
  std::vector<Run> runs;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  std::vector<std::pair<std::string, TraceFile>> found;
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::directory_entry& entry = *it;
    std::error_code entry_ec;
    if (!entry.is_regular_file(entry_ec) || entry.is_symlink(entry_ec)) continue;
    std::string name = entry.path().filename().string();
    if (!IsTraceFileName(name)) continue;
    TraceFile file;
    file.path = fs::relative(entry.path(), root, entry_ec).generic_string();
    if (entry_ec) continue;
    SplitWorkerSpan(name, &file.worker, &file.span);
    struct stat st {};
    if (stat(entry.path().c_str(), &st) != 0) continue;
    file.bytes = st.st_size;
    file.modified_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    std::string run = fs::path(file.path).parent_path().generic_string();
    found.emplace_back(run.empty() ? "." : run, std::move(file));
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first, a.second.worker, a.second.span, a.second.path) <
           std::tie(b.first, b.second.worker, b.second.span, b.second.path);
  });
  for (auto& [run, file] : found) {
    if (runs.empty() || runs.back().name != run) runs.push_back(Run{run, {}});
    runs.back().traces.push_back(std::move(file));
  }
  return runs;
}

Resolved ResolveUnder(const std::string& root, const std::string& relative) {
  if (relative.empty()) return {"", 404, "no file named"};
  if (relative[0] == '/') return {"", 403, "an absolute path is not served"};
  for (const auto& part : fs::path(relative))
    if (part == "..") return {"", 403, "'..' is not served"};
  std::string joined = root + "/" + relative;
  char real[PATH_MAX];
  if (realpath(joined.c_str(), real) == nullptr) return {"", 404, "no such file under LOGDIR"};
  std::string canonical = real;
  if (canonical.compare(0, root.size() + 1, root + "/") != 0)
    return {"", 403, "the path leads outside LOGDIR"};
  struct stat st {};
  if (stat(real, &st) != 0 || !S_ISREG(st.st_mode)) return {"", 404, "not a file"};
  return {canonical, 200, ""};
}

}  // namespace profsh::serve
