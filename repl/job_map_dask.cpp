#include "repl/job_map_dask.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/util/json_text.h"
#include "repl/job_child.h"

namespace profsh::repl {

namespace {

constexpr char kDriver[] = "profsh_job_map.py";

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string PlanJson(const DaskMapOptions& options, const std::vector<MapTask>& tasks) {
  std::string out = "{\"scheduler\": ";
  AppendJsonString(&out, options.scheduler);
  out += ", \"profsh\": ";
  AppendJsonString(&out, options.worker_profsh);
  out += ", \"retries\": " + std::to_string(options.retries) +
         ", \"worker_timeout\": " + std::to_string(options.worker_timeout_s) + ", \"tasks\": [";
  for (size_t i = 0; i < tasks.size(); ++i) {
    out += i ? ",\n{\"trace\": " : "\n{\"trace\": ";
    AppendJsonString(&out, tasks[i].trace);
    out += ", \"staging\": ";
    AppendJsonString(&out, tasks[i].staging);
    out += "}";
  }
  return out + "]}\n";
}

bool WriteAll(int fd, const std::string& text) {
  size_t written = 0;
  while (written < text.size()) {
    ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<size_t>(n);
  }
  return true;
}

// One line of the driver's standard output; false when it is not an event of the protocol.
bool HandleEvent(const std::string& line, const DaskMapOptions& options, size_t task_count,
                 std::vector<bool>* reported, MapProgress* progress) {
  nlohmann::json event = nlohmann::json::parse(line, nullptr, false);
  if (!event.is_object() || !event.contains("event") || !event["event"].is_string()) return false;
  const std::string kind = event["event"];
  if (kind == "started") {
    std::fprintf(stderr, "profsh job map: %zu traces on the Dask cluster at %s (%d workers)\n",
                 task_count, options.scheduler.c_str(), event.value("workers", 0));
    progress->Start();
    return true;
  }
  if (!event.contains("index") || !event["index"].is_number_unsigned()) return false;
  size_t index = event["index"];
  if (index >= task_count || (*reported)[index]) return false;
  (*reported)[index] = true;
  if (kind == "done") {
    progress->Done(index);
  } else if (kind == "failed") {
    progress->Failed(index, event.value("message", std::string("no message")));
  } else {
    return false;
  }
  return true;
}

}  // namespace

Result<std::string> FindDaskDriver() {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return Error{"cannot find the profsh executable (/proc/self/exe)"};
  std::string dir(self, static_cast<size_t>(n));
  dir.resize(dir.find_last_of('/'));
  for (const std::string& candidate :
       {dir + "/python/" + kDriver, dir + "/../lib/profsh/python/" + kDriver}) {
    if (IsFile(candidate)) return std::filesystem::path(candidate).lexically_normal().string();
  }
  return Error{std::string("the Dask driver ") + kDriver + " is not beside " + self +
               " (in python/ or ../lib/profsh/python/)"};
}

Status RunDaskMap(const DaskMapOptions& options, const std::vector<MapTask>& tasks,
                  MapProgress* progress) {
  auto driver = FindDaskDriver();
  if (!driver.ok()) return driver.error();
  if (access(options.python.c_str(), X_OK) != 0) {
    return Error{
        "--dask runs the driver with " + options.python + ", which " +
        (errno == ENOENT ? "does not exist" : "cannot be run: " + std::string(strerror(errno))) +
        " (--python PATH names another Python with Dask's distributed module)"};
  }
  int to_driver[2], from_driver[2];
  if (pipe(to_driver) != 0) return Error{std::string("pipe: ") + strerror(errno)};
  if (pipe(from_driver) != 0) {
    close(to_driver[0]);
    close(to_driver[1]);
    return Error{std::string("pipe: ") + strerror(errno)};
  }
  const pid_t job_map = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    std::string why = strerror(errno);
    for (int fd : {to_driver[0], to_driver[1], from_driver[0], from_driver[1]}) close(fd);
    return Error{"cannot start the Dask driver: " + why};
  }
  if (pid == 0) {
    DieWithJobMap(job_map);
    dup2(to_driver[0], STDIN_FILENO);
    dup2(from_driver[1], STDOUT_FILENO);
    for (int fd : {to_driver[0], to_driver[1], from_driver[0], from_driver[1]}) close(fd);
    const char* argv[] = {options.python.c_str(), driver->c_str(), nullptr};
    execv(options.python.c_str(), const_cast<char* const*>(argv));
    std::fprintf(stderr, "profsh job map: cannot run %s: %s\n", options.python.c_str(),
                 strerror(errno));
    _exit(2);
  }
  close(to_driver[0]);
  close(from_driver[1]);
  // The driver reads the whole plan before it writes anything, so writing it all first cannot
  // block on a full pipe the other way. A driver that died early must not kill us with SIGPIPE.
  auto old_pipe_handler = signal(SIGPIPE, SIG_IGN);
  WriteAll(to_driver[1], PlanJson(options, tasks));
  close(to_driver[1]);
  signal(SIGPIPE, old_pipe_handler);

  std::vector<bool> reported(tasks.size(), false);
  FILE* events = fdopen(from_driver[0], "r");
  char* line = nullptr;
  size_t capacity = 0;
  ssize_t length;
  while ((length = getline(&line, &capacity, events)) > 0) {
    std::string text(line, static_cast<size_t>(length));
    if (!HandleEvent(text, options, tasks.size(), &reported, progress)) {
      std::fprintf(stderr, "profsh job map: the Dask driver said: %s", text.c_str());
    }
  }
  std::free(line);
  std::fclose(events);

  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  bool driver_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!driver_ok && std::none_of(reported.begin(), reported.end(), [](bool r) { return r; })) {
    return Error{"the Dask driver (" + *driver + ") stopped before any trace was summarized"};
  }
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (reported[i]) continue;
    progress->Failed(i, driver_ok ? "the Dask driver ended without its result"
                                  : "the Dask driver stopped before its result came");
  }
  return Status::Ok();
}

}  // namespace profsh::repl
