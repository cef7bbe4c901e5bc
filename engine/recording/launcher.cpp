#include "engine/recording/launcher.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>

#include "engine/recording/cpu_sampler.h"
#include "engine/recording/signal_forwarding.h"
#include "engine/stream/pattern.h"
#include "engine/stream/step_regex.h"
#include "engine/stream/stream_format.h"

namespace profsh {

namespace {

std::string DirName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Sets `name` for the child unless another tool already owns it. Returns false then.
bool TakeVariable(std::vector<std::string>* env, const char* name, const std::string& value,
                  std::vector<std::string>* notices, const char* what) {
  const char* current = getenv(name);
  if (current && *current && value != current) {
    notices->push_back(std::string(name) + " is already set to " + current +
                       " (another tool?); profsh leaves it alone, so " + what +
                       " are not collected");
    return false;
  }
  env->push_back(std::string(name) + "=" + value);
  return true;
}

}  // namespace

const std::vector<std::string>& KnownActivities() {
  static const std::vector<std::string> known = {"nvtx", "itt", "torch", "cuda", "cpu"};
  return known;
}

namespace {

bool CudaDriverPresent() {
  static const bool present = [] {
    void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (driver) dlclose(driver);
    return driver != nullptr;
  }();
  return present;
}

// libcupti beside the CUDA toolkit ($CUDA_HOME, $CUDA_PATH, /usr/local/cuda); empty when none
// is there (the collector then asks the dynamic loader for libcupti.so).
std::string FindCupti() {
  std::vector<std::string> roots;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* v = getenv(var); v && *v) roots.push_back(v);
  }
  roots.push_back("/usr/local/cuda");
  for (const std::string& root : roots) {
    for (const char* sub : {"/extras/CUPTI/lib64/libcupti.so", "/lib64/libcupti.so",
                            "/lib/libcupti.so", "/targets/x86_64-linux/lib/libcupti.so"}) {
      if (IsFile(root + sub)) return root + sub;
    }
  }
  return "";
}

}  // namespace

std::vector<std::string> DefaultActivities() {
  std::vector<std::string> activities{"nvtx", "itt", "torch"};
  if (CudaDriverPresent()) activities.push_back("cuda");
  return activities;
}

std::string ActivityList() {
  std::string list;
  for (const std::string& a : KnownActivities()) {
    if (!list.empty()) list += ", ";
    list += a;
  }
  return list;
}

Result<std::string> FindCollector() {
  if (const char* env = getenv("PROFSH_COLLECTOR"); env && *env) {
    if (IsFile(env)) return std::string(env);
    return Error{std::string("PROFSH_COLLECTOR names ") + env + ", which is not a file"};
  }
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return Error{"cannot find the profsh executable (/proc/self/exe)"};
  self[n] = '\0';
  std::string dir = DirName(self);
  for (const std::string& candidate :
       {dir + "/libprofsh_collector.so", dir + "/../lib/profsh/libprofsh_collector.so"}) {
    if (IsFile(candidate)) {
      char real[4096];
      return std::string(realpath(candidate.c_str(), real) ? real : candidate.c_str());
    }
  }
  return Error{"the collector library libprofsh_collector.so is not beside " + std::string(self) +
               " (set PROFSH_COLLECTOR to its path)"};
}

Result<std::string> CreateSessionFolder() {
  const char* tmp = getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/profsh-session-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  // mkdtemp creates the folder with mode 0700: other users cannot read the streams.
  if (mkdtemp(buf.data()) == nullptr) {
    return Error{"cannot create a session folder " + pattern + ": " + strerror(errno)};
  }
  return std::string(buf.data());
}

void RemoveSessionFolder(const std::string& folder) {
  if (DIR* d = opendir(folder.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      unlink((folder + "/" + name).c_str());
    }
    closedir(d);
  }
  rmdir(folder.c_str());
}

Status CheckStepMarker(const std::string& pattern, StepMarkerSyntax syntax) {
  if (pattern.empty()) return Error{"the step marker pattern is empty"};
  if (syntax == StepMarkerSyntax::kRegex) {
    std::string why;
    const stream::StepRegex* regex = stream::CompileStepRegex(pattern.c_str(), &why);
    if (regex == nullptr) return Error{"malformed regular expression '" + pattern + "': " + why};
    stream::FreeStepRegex(regex);
    return Status::Ok();
  }
  if (!stream::PatternValid(pattern.c_str()))
    return Error{"malformed step marker pattern '" + pattern + "'"};
  return Status::Ok();
}

Result<std::unique_ptr<ControlChannel>> ControlChannel::Create(const std::string& session) {
  std::string path = session + "/" + stream::kControlFile;
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Error{"cannot create " + path + ": " + strerror(errno)};
  if (ftruncate(fd, sizeof(stream::ControlBlock)) != 0) {
    close(fd);
    return Error{"cannot size " + path + ": " + strerror(errno)};
  }
  void* p = mmap(nullptr, sizeof(stream::ControlBlock), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return Error{"cannot map " + path + ": " + strerror(errno)};
  auto* block = static_cast<stream::ControlBlock*>(p);
  __atomic_store_n(&block->magic, stream::kControlMagic, __ATOMIC_RELEASE);
  std::unique_ptr<ControlChannel> c(new ControlChannel());
  c->block_ = p;
  return c;
}

ControlChannel::~ControlChannel() {
  if (block_) munmap(block_, sizeof(stream::ControlBlock));
}

uint64_t ControlChannel::Request(int64_t pid, int64_t steps) {
  auto* block = static_cast<stream::ControlBlock*>(block_);
  stream::ControlRequest& r = block->requests[next_slot_];
  next_slot_ = (next_slot_ + 1) % stream::kControlRequests;
  uint64_t id = next_id_++;
  r.pid = pid;
  r.steps = steps;
  __atomic_store_n(&r.id, id, __ATOMIC_RELEASE);  // last: the request is complete
  return id;
}

void ControlChannel::Stop() {
  __atomic_store_n(&static_cast<stream::ControlBlock*>(block_)->stop, uint64_t{1},
                   __ATOMIC_RELEASE);
}

Result<LaunchResult> RunWorkload(const LaunchOptions& options) {
  if (options.argv.empty()) return Error{"no command to run"};
  if (options.schedule && !options.schedule->Valid()) {
    return Error{Schedule::kInvalidMessage};
  }
  std::string marker = options.step_marker;
  StepMarkerSyntax syntax = options.step_marker_syntax;
  if (marker.empty() && (options.schedule || options.on_demand)) {
    marker = kDefaultStepMarker;
    syntax = StepMarkerSyntax::kLuaPattern;
  }
  if (!marker.empty()) {
    Status s = CheckStepMarker(marker, syntax);
    if (!s.ok()) return Error{s.message()};
  }
  if (options.buffer_kb > kMaxBufferKb)
    return Error{"buffer_kb: at most " + std::to_string(kMaxBufferKb) + " (KiB per thread)"};
  if (options.drain_ms > kMaxDrainMs)
    return Error{"drain_ms: at most " + std::to_string(kMaxDrainMs)};
  for (const std::string& a : options.activities) {
    const auto& known = KnownActivities();
    if (std::find(known.begin(), known.end(), a) == known.end()) {
      return Error{"unknown activity '" + a + "' (activities: " + ActivityList() + ")"};
    }
  }
  if (!options.cupti.empty() && !IsFile(options.cupti))
    return Error{"cupti: " + options.cupti + " is not a file"};
  std::string collector = options.collector;
  if (collector.empty()) {
    auto found = FindCollector();
    if (!found.ok()) return found.error();
    collector = found.value();
  }
  // LD_PRELOAD (below) separates its entries with spaces and colons: a path holding one cannot
  // be preloaded, and the workload would run with part of the collector missing.
  if (collector.find_first_of(" :") != std::string::npos)
    return Error{"the collector's path " + collector +
                 " contains a space or a colon, which LD_PRELOAD cannot carry: move profsh to a "
                 "folder whose path has none"};
  auto session =
      options.session.empty() ? CreateSessionFolder() : Result<std::string>(options.session);
  if (!session.ok()) return session.error();

  LaunchResult result;
  result.session = session.value();
  std::vector<std::string> env;
  std::string activities;
  for (const std::string& a : options.activities) activities += (activities.empty() ? "" : ",") + a;
  env.push_back(std::string(stream::kEnvSession) + "=" + result.session);
  env.push_back(std::string(stream::kEnvActivities) + "=" + activities);
  if (options.buffer_kb)
    env.push_back(std::string(stream::kEnvBufferKb) + "=" + std::to_string(options.buffer_kb));
  if (options.drain_ms)
    env.push_back(std::string(stream::kEnvDrainMs) + "=" + std::to_string(options.drain_ms));
  if (options.ring_total_kb)
    env.push_back(std::string(stream::kEnvRingTotalKb) + "=" +
                  std::to_string(options.ring_total_kb));
  if (options.schedule) {
    const Schedule& sc = *options.schedule;
    env.push_back(std::string(stream::kEnvSchedule) + "=" + std::to_string(sc.skip_first) + "," +
                  std::to_string(sc.wait) + "," + std::to_string(sc.warmup) + "," +
                  std::to_string(sc.active) + "," + std::to_string(sc.repeat) + "," +
                  std::to_string(sc.skip_first_wait));
  }
  if (!marker.empty()) {
    const char* variable =
        syntax == StepMarkerSyntax::kRegex ? stream::kEnvStepRegex : stream::kEnvStepMarker;
    env.push_back(std::string(variable) + "=" + marker);
  }
  if (!options.capture_range.empty())
    env.push_back(std::string(stream::kEnvCaptureRange) + "=" + options.capture_range);
  if (options.on_demand) env.push_back(std::string(stream::kEnvOnDemand) + "=1");
  // LD_PRELOAD is a list: ours goes first, the user's stay. The memory hooks only when asked.
  const std::string dir = DirName(collector);
  std::string ours = collector;
  if (options.profile_memory) {
    std::string memory = dir + "/libprofsh_memory.so";
    if (!IsFile(memory)) return Error{"profile_memory needs " + memory + ", which is missing"};
    ours += " " + memory;
    env.push_back(std::string(stream::kEnvProfileMemory) +
                  (options.profile_memory_all ? "=all" : "=1"));
    env.push_back(std::string(stream::kEnvLauncherPid) + "=" + std::to_string(getpid()));
  }
  const char* preload = getenv("LD_PRELOAD");
  // Appended, not chained with +: gcc 12 warns falsely (-Wrestrict) on the chained form here.
  std::string preload_entry = "LD_PRELOAD=" + ours;
  if (preload && *preload) preload_entry.append(" ").append(preload);
  env.push_back(std::move(preload_entry));
  // PyTorch: a start-up hook on the Python path loads the operator source once torch is imported:
  // the one built here (PROFSH_TORCH_PLUGIN, which may be absent) when it fits that torch and
  // Python, else one it builds for them on first use (python/profsh_torch_build.py).
  const bool torch = std::find(options.activities.begin(), options.activities.end(), "torch") !=
                     options.activities.end();
  const std::string plugin = dir + "/libprofsh_torch.so";
  if (torch && IsFile(dir + "/python/sitecustomize.py")) {
    const char* pythonpath = getenv("PYTHONPATH");
    std::string path_entry = "PYTHONPATH=" + dir + "/python";
    if (pythonpath && *pythonpath) path_entry.append(":").append(pythonpath);
    env.push_back(std::move(path_entry));
    env.push_back("PROFSH_TORCH_PLUGIN=" + plugin);
    if (options.record_shapes) env.push_back("PROFSH_RECORD_SHAPES=1");
    if (options.with_stack == StackForm::kExecutingLine) env.push_back("PROFSH_WITH_STACK=1");
    if (options.with_stack == StackForm::kTorch) env.push_back("PROFSH_WITH_STACK=torch");
    if (options.with_flops) env.push_back("PROFSH_WITH_FLOPS=1");
    // The cpu activity's samples of Python threads get their Python frames.
    if (std::find(options.activities.begin(), options.activities.end(), "cpu") !=
        options.activities.end())
      env.push_back("PROFSH_PYTHON_CALLS=1");
  } else if (torch && (options.record_shapes || options.with_stack != StackForm::kNone ||
                       options.with_flops)) {
    result.notices.push_back(
        "record_shapes, with_stack and with_flops need the PyTorch operator source's start-up "
        "hook (" +
        dir + "/python/sitecustomize.py), which is missing");
  }
  const bool nvtx = std::find(options.activities.begin(), options.activities.end(), "nvtx") !=
                    options.activities.end();
  const bool itt = std::find(options.activities.begin(), options.activities.end(), "itt") !=
                   options.activities.end();
  if (nvtx) TakeVariable(&env, "NVTX_INJECTION64_PATH", collector, &result.notices, "NVTX ranges");
  if (itt) TakeVariable(&env, "INTEL_LIBITTNOTIFY64", collector, &result.notices, "ITT tasks");
  // CUDA: the driver loads the collector (already preloaded, so the same copy) at cuInit and
  // calls its InitializeInjection, which starts CUPTI in that process.
  const bool cuda = std::find(options.activities.begin(), options.activities.end(), "cuda") !=
                    options.activities.end();
  if (cuda) {
    TakeVariable(&env, "CUDA_INJECTION64_PATH", collector, &result.notices,
                 "GPU kernels and copies");
    const std::string cupti = options.cupti.empty() ? FindCupti() : options.cupti;
    if (!cupti.empty()) env.push_back(std::string(stream::kEnvCupti) + "=" + cupti);
    if (!CudaDriverPresent())
      result.notices.push_back(
          "cuda: no CUDA driver (libcuda.so.1) found here; GPU activity is recorded only in "
          "processes that load one themselves");
  }

  // The child reports a failed exec through this pipe (closed on a successful exec).
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + strerror(errno)};
  // Like system(): while the workload runs, Ctrl-\ is its to handle. Ctrl-C, SIGTERM and SIGHUP
  // are passed on to it (SignalForwarding), and profsh waits for it to end.
  struct sigaction ignore {
  }, old_quit{};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGQUIT, &ignore, &old_quit);
  SignalForwarding forwarding;
  // Blocked except while sleeping in ppoll, so that none comes between a check and the sleep.
  const sigset_t waited = SignalForwarding::WaitedSignals();
  sigset_t previous_mask, sleep_mask;
  sigprocmask(SIG_BLOCK, &waited, &previous_mask);
  sleep_mask = previous_mask;
  for (int s = 1; s < NSIG; ++s) {
    if (sigismember(&waited, s) == 1) sigdelset(&sleep_mask, s);
  }

  const bool cpu = std::find(options.activities.begin(), options.activities.end(), "cpu") !=
                   options.activities.end();
  // With cpu, the child waits before its exec until profsh has opened the sampling events on
  // it (they start at the exec), or has given up and asks for the collector's timers.
  int go_fds[2] = {-1, -1};
  if (cpu && pipe2(go_fds, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + strerror(errno)};
  // The child appends why perf_event_open failed (what profsh sends it) to this entry.
  const std::string timer_prefix = std::string(stream::kEnvSampleTimer) + "=" +
                                   std::to_string(options.sample_rate) + "," +
                                   std::to_string(options.sample_stack_bytes) + ",";
  static char timer_entry[1024];

  std::vector<char*> argv;
  for (const std::string& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    sigaction(SIGQUIT, &old_quit, nullptr);
    SignalForwarding::RestoreInChild(previous_mask);
    close(pipe_fds[0]);
    // One step marker, in one syntax: not a stale one of the other kind from profsh's own
    // environment (a profsh run inside another).
    unsetenv(stream::kEnvStepMarker);
    unsetenv(stream::kEnvStepRegex);
    for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));
    if (cpu) {
      close(go_fds[1]);
      char go[512] = {};
      size_t got_go = 0;
      while (got_go + 1 < sizeof go) {
        const ssize_t n = read(go_fds[0], go + got_go, sizeof go - 1 - got_go);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got_go += static_cast<size_t>(n);
      }
      if (go[0] == 'T' && timer_prefix.size() + got_go < sizeof timer_entry) {
        memcpy(timer_entry, timer_prefix.data(), timer_prefix.size());
        memcpy(timer_entry + timer_prefix.size(), go + 1, got_go - 1);
        timer_entry[timer_prefix.size() + got_go - 1] = '\0';
        putenv(timer_entry);
      }
    }
    execvp(argv[0], argv.data());
    int err = errno;
    ssize_t ignored = write(pipe_fds[1], &err, sizeof err);
    (void)ignored;
    _exit(127);
  }
  int saved = errno;
  close(pipe_fds[1]);
  if (pid < 0) {
    close(pipe_fds[0]);
    sigaction(SIGQUIT, &old_quit, nullptr);
    sigprocmask(SIG_SETMASK, &previous_mask, nullptr);
    RemoveSessionFolder(result.session);
    return Error{std::string("cannot start ") + options.argv[0] + ": fork: " + strerror(saved)};
  }
  SignalForwarding::SetWorkload(pid);
  result.pid = pid;
  std::unique_ptr<CpuSampler> sampler;
  if (cpu) {
    close(go_fds[0]);
    CpuSamplerOptions sampling{options.sample_rate, options.sample_stack_bytes,
                               options.sample_event};
    auto started = CpuSampler::Start(pid, result.session, sampling);
    std::string go = "P";
    if (started.ok()) {
      sampler = std::move(started.value());
      result.sampling_method = sampler->method_name();
    } else {
      result.sampling_method = "timer (CLOCK_THREAD_CPUTIME_ID, in the collector)";
      result.sampling_note = started.error().message;
      go = "T" + result.sampling_note.substr(0, 400);
    }
    ssize_t ignored = write(go_fds[1], go.data(), go.size());
    (void)ignored;
    close(go_fds[1]);
  }
  int exec_errno = 0;
  ssize_t got;
  do {
    got = read(pipe_fds[0], &exec_errno, sizeof exec_errno);
  } while (got < 0 && errno == EINTR);
  close(pipe_fds[0]);
  if (got != static_cast<ssize_t>(sizeof exec_errno) && options.launched) options.launched(pid);
  int status = 0;
  bool reaped = false;
  const int signals_before = SignalForwarding::Received();
  while (true) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR && errno != EAGAIN)) {
      reaped = done == pid;
      break;
    }
    // A second signal: the user wants out now, with what was recorded so far.
    if (SignalForwarding::Received() - signals_before >= 2) break;
    // Finished windows are read and handed over while the workload runs.
    if (options.poll) options.poll();
    // SIGCHLD or a signal wakes this; the timeout covers a signal another thread took.
    timespec tick{0, (options.poll ? 20 : 50) * 1000 * 1000};
    ppoll(nullptr, 0, &tick, &sleep_mask);
  }
  SignalForwarding::SetWorkload(0);
  if (sampler) {
    sampler->Stop();
    result.samples_taken = sampler->stats().samples;
  }
  result.signals_received = SignalForwarding::Received() - signals_before;
  result.forwarded_signal = SignalForwarding::LastSignal();
  result.signal_from_terminal = SignalForwarding::LastFromTerminal();
  sigaction(SIGQUIT, &old_quit, nullptr);
  sigprocmask(SIG_SETMASK, &previous_mask, nullptr);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    RemoveSessionFolder(result.session);
    return Error{"cannot run " + options.argv[0] + ": " + strerror(exec_errno)};
  }
  if (!reaped) {
    result.still_running = true;
    result.exit_code = 128 + result.forwarded_signal;
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.term_signal = WTERMSIG(status);
    result.exit_code = 128 + result.term_signal;
  }
  return result;
}

}  // namespace profsh
