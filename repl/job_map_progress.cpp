#include "repl/job_map_progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace profsh::repl {

namespace {
constexpr char kPrefix[] = "profsh job map";
constexpr size_t kBarWidth = 30;
}  // namespace

MapProgress::MapProgress(const std::vector<MapTask>& tasks, int retries)
    : tasks_(tasks), outputs_(tasks), retries_(retries), tty_(isatty(STDERR_FILENO) != 0) {}

void MapProgress::Done(size_t index) {
  auto placed = outputs_.Place(index);
  if (!placed.ok()) {
    Failed(index, placed.error().message);
    return;
  }
  placed_.insert(placed_.end(), placed->begin(), placed->end());
  ++done_;
  Draw(false);
}

void MapProgress::Failed(size_t index, const std::string& message) {
  failures_.emplace_back(index, message);
  Draw(false);
}

void MapProgress::Draw(bool final) {
  auto now = std::chrono::steady_clock::now();
  // A log gets a line at most every second: a 4,096-rank map would otherwise write 4,096.
  if (!tty_ && !final && last_line_ != std::chrono::steady_clock::time_point{} &&
      now - last_line_ < std::chrono::seconds(1))
    return;
  last_line_ = now;
  size_t total = tasks_.size();
  size_t filled = total ? kBarWidth * (done_ + failures_.size()) / total : kBarWidth;
  std::string line = std::string(kPrefix) + ": [" + std::string(filled, '#') +
                     std::string(kBarWidth - filled, '.') + "] " + std::to_string(done_) + "/" +
                     std::to_string(total) + " traces done";
  if (!failures_.empty()) line += ", " + std::to_string(failures_.size()) + " failed";
  if (final && !tty_ && line == last_text_) return;  // the last line said it already
  last_text_ = line;
  std::fprintf(stderr, tty_ ? "\r%s%s" : "%s%s", line.c_str(), tty_ && !final ? "" : "\n");
  std::fflush(stderr);
}

int MapProgress::Finish() {
  Draw(true);
  outputs_.RemoveStaging();
  if (!tasks_.empty()) {
    std::string folder = std::filesystem::path(tasks_.front().staging).parent_path().string();
    std::fprintf(stderr, "%s: %zu of %zu traces summarized, %zu rank summar%s written to %s\n",
                 kPrefix, done_, tasks_.size(), placed_.size(), placed_.size() == 1 ? "y" : "ies",
                 folder.c_str());
  }
  if (failures_.empty()) return 0;
  std::sort(failures_.begin(), failures_.end());
  std::fprintf(stderr, "%s: %zu trace%s not summarized (a failing summarize is tried %d time%s):\n",
               kPrefix, failures_.size(), failures_.size() == 1 ? "" : "s", retries_ + 1,
               retries_ == 0 ? "" : "s");
  for (const auto& [index, message] : failures_) {
    std::fprintf(stderr, "  %s: %s\n", tasks_[index].trace.c_str(), message.c_str());
  }
  return 1;
}

}  // namespace profsh::repl
