#include "repl/job_map_local.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <string>

#include "repl/job_child.h"

namespace profsh::repl {

namespace {

struct Attempt {
  size_t index;
  int tries;     // including this one
  FILE* errors;  // the child's standard error, an anonymous temporary file
};

// The summarize processes running. Whatever ends the map early (an error returned, an exception)
// kills and reaps those left, so that no summarize outlives `profsh job map`.
class Children {
 public:
  Children() = default;
  Children(const Children&) = delete;
  Children& operator=(const Children&) = delete;
  ~Children() {
    for (const auto& [pid, attempt] : running_) kill(pid, SIGKILL);
    for (const auto& [pid, attempt] : running_) {
      while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      std::fclose(attempt.errors);
    }
  }

  void Add(pid_t pid, const Attempt& attempt) { running_.emplace(pid, attempt); }
  // The attempt of a child that ended, now the caller's; false when `pid` is none of ours.
  bool Take(pid_t pid, Attempt* attempt) {
    auto it = running_.find(pid);
    if (it == running_.end()) return false;
    *attempt = it->second;
    running_.erase(it);
    return true;
  }
  size_t size() const { return running_.size(); }
  bool empty() const { return running_.empty(); }

 private:
  std::map<pid_t, Attempt> running_;
};

// What summarize said about the trace: its lines that name the trace (summarize's errors name
// the file; a count line after them does not), else its last line.
std::string MessageAbout(FILE* f, const std::string& trace) {
  std::string text;
  std::rewind(f);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::string naming, last;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    last = line;
    if (line.find(trace) != std::string::npos) naming += (naming.empty() ? "" : "; ") + line;
  }
  return naming.empty() ? last : naming;
}

std::string HowItEnded(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  }
  return "ended with status " + std::to_string(status);
}

// Starts `program summarize TRACE -o SUMMARY` with its standard output discarded and its
// standard error in `errors`; the child's pid, or -1 with errno set.
pid_t StartSummarize(const std::string& program, const MapTask& task, FILE* errors) {
  const pid_t job_map = getpid();
  pid_t pid = fork();
  if (pid != 0) return pid;
  DieWithJobMap(job_map);
  // Its output must not reach profsh's: a child that cannot discard it does not run. (No
  // O_CLOEXEC: with profsh's stdin or stdout closed, /dev/null is opened as that very fd.)
  const int devnull = open("/dev/null", O_RDWR);
  if (devnull < 0 || dup2(devnull, STDIN_FILENO) < 0 || dup2(devnull, STDOUT_FILENO) < 0 ||
      dup2(fileno(errors), STDERR_FILENO) < 0) {
    _exit(127);
  }
  if (devnull > STDERR_FILENO) close(devnull);
  const char* argv[] = {program.c_str(),      "summarize", task.trace.c_str(), "-o",
                        task.staging.c_str(), nullptr};
  execv(program.c_str(), const_cast<char* const*>(argv));
  std::fprintf(stderr, "cannot run %s: %s\n", program.c_str(), strerror(errno));
  _exit(127);
}

}  // namespace

Status RunLocalMap(const std::string& program, const std::vector<MapTask>& tasks, int processes,
                   int retries, MapProgress* progress) {
  std::deque<Attempt> waiting;
  for (size_t i = 0; i < tasks.size(); ++i) waiting.push_back({i, 1, nullptr});
  Children running;
  progress->Start();
  while (!waiting.empty() || !running.empty()) {
    while (!waiting.empty() && static_cast<int>(running.size()) < processes) {
      Attempt a = waiting.front();
      a.errors = std::tmpfile();
      if (a.errors == nullptr)
        return Error{std::string("cannot make a temporary file: ") + strerror(errno)};
      // Only its own child writes to it: the other children must not hold it open.
      fcntl(fileno(a.errors), F_SETFD, FD_CLOEXEC);
      pid_t pid = StartSummarize(program, tasks[a.index], a.errors);
      if (pid < 0) {
        std::fclose(a.errors);
        if (!running.empty()) break;  // out of processes for now: wait for one to end
        return Error{std::string("cannot start a process: ") + strerror(errno)};
      }
      waiting.pop_front();
      running.Add(pid, a);
    }
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      return Error{std::string("waiting for the summarize processes: ") + strerror(errno)};
    }
    Attempt a{};
    if (!running.Take(pid, &a)) continue;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      std::fclose(a.errors);
      progress->Done(a.index);
    } else if (a.tries <= retries) {
      std::fclose(a.errors);
      waiting.push_back({a.index, a.tries + 1, nullptr});
    } else {
      std::string line = MessageAbout(a.errors, tasks[a.index].trace);
      std::fclose(a.errors);
      progress->Failed(a.index,
                       (line.empty() ? "no message" : line) + " (" + HowItEnded(status) + ")");
    }
  }
  return Status::Ok();
}

}  // namespace profsh::repl
