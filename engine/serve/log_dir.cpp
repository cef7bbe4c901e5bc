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
// What profsh run's WindowPath appends to a window's BASE.PID.N.
constexpr const char* kWindowSuffixes[] = {".profsh", ".json", ".json.gz"};

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool AllDigits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// "PID.N" of BASE.PID.N.EXT, or "" when `name` is not such a window of `base`.
std::string WindowNumbers(const std::string& base, const std::string& name) {
  if (name.size() <= base.size() + 1 || name.compare(0, base.size(), base) != 0 ||
      name[base.size()] != '.')
    return "";
  for (const char* suffix : kWindowSuffixes) {
    if (!EndsWith(name, suffix)) continue;
    std::string numbers =
        name.substr(base.size() + 1, name.size() - base.size() - 1 - std::strlen(suffix));
    size_t dot = numbers.find('.');
    if (dot != std::string::npos && AllDigits(std::string_view(numbers).substr(0, dot)) &&
        AllDigits(std::string_view(numbers).substr(dot + 1)))
      return numbers;
  }
  return "";
}

// Numbers (pids, window indices, span timestamps) in numeric order, before other names, which
// are in text order: one order for any mix ("9" < "10" < "1x"), as std::sort needs.
bool NaturalLess(const std::string& a, const std::string& b) {
  const bool a_number = AllDigits(a), b_number = AllDigits(b);
  if (a_number != b_number) return a_number;
  if (a_number && a.size() != b.size()) return a.size() < b.size();
  return a < b;
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
  bool digits = dot != std::string::npos && AllDigits(std::string_view(stem).substr(dot + 1));
  *worker = digits ? stem.substr(0, dot) : stem;
  *span = digits ? stem.substr(dot + 1) : "";
}

bool TraceNaming::Matches(const std::string& file_name) const {
  if (window_base_.empty()) return IsTraceFileName(file_name);
  return !WindowNumbers(window_base_, file_name).empty();
}

void TraceNaming::Split(const std::string& file_name, std::string* worker,
                        std::string* span) const {
  if (window_base_.empty()) return SplitWorkerSpan(file_name, worker, span);
  std::string numbers = WindowNumbers(window_base_, file_name);
  size_t dot = numbers.find('.');
  *worker = numbers.substr(0, dot);
  *span = numbers.substr(dot + 1);
}

std::string TraceNaming::RunName(const std::string& folder) const {
  if (!window_base_.empty()) return window_base_;
  return folder.empty() ? "." : folder;
}

TraceNaming::FileVersion TraceNaming::VersionOf(const struct stat& st) {
  return FileVersion{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                     static_cast<int64_t>(st.st_size),
                     static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

size_t TraceNaming::LeaveOutPresentWindows(const std::string& folder) {
  left_out_.clear();
  std::error_code ec;
  fs::directory_iterator it(folder, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    struct stat st {};
    if (Matches(name) && stat(it->path().c_str(), &st) == 0) left_out_[name] = VersionOf(st);
  }
  return left_out_.size();
}

bool TraceNaming::LeftOut(const std::string& file_name, const struct stat& st) const {
  auto it = left_out_.find(file_name);
  return it != left_out_.end() && it->second == VersionOf(st);
}

std::vector<Run> ScanLogDir(const std::string& root, const TraceNaming& naming) {
  std::vector<Run> runs;
  std::vector<std::pair<std::string, TraceFile>> found;
  auto consider = [&](const fs::directory_entry& entry) {
    std::error_code entry_ec;
    if (!entry.is_regular_file(entry_ec) || entry.is_symlink(entry_ec)) return;
    std::string name = entry.path().filename().string();
    if (!naming.Matches(name)) return;
    TraceFile file;
    file.path = fs::relative(entry.path(), root, entry_ec).generic_string();
    if (entry_ec) return;
    naming.Split(name, &file.worker, &file.span);
    struct stat st {};
    if (stat(entry.path().c_str(), &st) != 0 || naming.LeftOut(name, st)) return;
    file.bytes = st.st_size;
    file.modified_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    std::string run = naming.RunName(fs::path(file.path).parent_path().generic_string());
    found.emplace_back(std::move(run), std::move(file));
  };
  std::error_code ec;
  if (naming.recursive()) {
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) consider(*it);
  } else {
    fs::directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) consider(*it);
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    if (a.second.worker != b.second.worker) return NaturalLess(a.second.worker, b.second.worker);
    if (a.second.span != b.second.span) return NaturalLess(a.second.span, b.second.span);
    return a.second.path < b.second.path;
  });
  for (auto& [run, file] : found) {
    if (runs.empty() || runs.back().name != run) runs.push_back(Run{run, {}});
    runs.back().traces.push_back(std::move(file));
  }
  return runs;
}

Resolved ResolveUnder(const std::string& root, const std::string& relative,
                      const TraceNaming& naming) {
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
  fs::path asked(relative);
  if (!naming.Matches(asked.filename().string()) ||
      (!naming.recursive() && asked.has_parent_path()))
    return {"", 404, "not a trace this server shows"};
  if (naming.LeftOut(asked.filename().string(), st))
    return {"", 404, "a window of an earlier run with the same -o, not this run's"};
  return {canonical, 200, ""};
}

}  // namespace profsh::serve
