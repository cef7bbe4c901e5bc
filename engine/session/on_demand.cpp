#include "engine/session/on_demand.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <sstream>

#include "engine/exporters/exporter.h"
#include "engine/stream/stream_format.h"

namespace profsh {

namespace {

bool EndsWith(const std::string& s, const char* suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

Result<sockaddr_un> SocketAddress(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return Error{path + ": socket path too long"};
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

}  // namespace

Result<std::unique_ptr<OnDemandServer>> OnDemandServer::Listen(const std::string& session) {
  std::unique_ptr<OnDemandServer> s(new OnDemandServer());
  s->path_ = session + "/" + kControlSocket;
  auto addr = SocketAddress(s->path_);
  if (!addr.ok()) return addr.error();
  s->listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s->listen_fd_ < 0) return Error{std::string("socket: ") + strerror(errno)};
  // The session folder is 0700 already; the socket is the user's alone too.
  mode_t old = umask(0077);
  int bound =
      bind(s->listen_fd_, reinterpret_cast<const sockaddr*>(&addr.value()), sizeof(sockaddr_un));
  umask(old);
  if (bound != 0 || listen(s->listen_fd_, 8) != 0) return Error{s->path_ + ": " + strerror(errno)};
  return s;
}

OnDemandServer::~OnDemandServer() {
  for (Client& c : clients_) {
    if (c.fd >= 0) close(c.fd);
  }
  if (listen_fd_ >= 0) close(listen_fd_);
  if (!path_.empty()) unlink(path_.c_str());
}

void OnDemandServer::Reply(Client& c, const std::string& line) {
  std::string text = line + "\n";
  ssize_t ignored = write(c.fd, text.data(), text.size());
  (void)ignored;
  close(c.fd);
  c.fd = -1;
}

void OnDemandServer::Poll(ControlChannel& control) {
  while (true) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) break;
    ucred cred{};
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != getuid()) {
      Client refused;
      refused.fd = fd;
      Reply(refused, "error: only the user running profsh may request traces");
      continue;
    }
    Client c;
    c.fd = fd;
    c.id = next_client_++;
    clients_.push_back(std::move(c));
  }
  for (Client& c : clients_) {
    if (c.fd < 0 || c.request != 0 || c.dump) continue;
    char buf[4096];
    ssize_t n = read(c.fd, buf, sizeof buf);
    if (n > 0) c.input.append(buf, static_cast<size_t>(n));
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
      close(c.fd);
      c.fd = -1;
      continue;
    }
    size_t nl = c.input.find('\n');
    if (nl == std::string::npos) continue;
    // "trace PID STEPS OUTPUT"
    std::istringstream in(c.input.substr(0, nl));
    std::string verb, output;
    int64_t pid = 0, steps = 0;
    in >> verb >> pid;
    if (verb == "dump") {
      // "dump PID"
      if (pid <= 0) {
        Reply(c, "error: expected 'dump PID'");
        continue;
      }
      c.pid = pid;
      c.dump = true;
      continue;
    }
    if (verb == "trace" && !refuse_traces_.empty()) {
      Reply(c, "error: " + refuse_traces_);
      continue;
    }
    in >> steps;
    std::getline(in >> std::ws, output);
    if (verb != "trace" || pid <= 0 || steps <= 0 || output.empty()) {
      Reply(c, "error: expected 'trace PID STEPS OUTPUT'");
      continue;
    }
    c.pid = pid;
    c.output = output;
    c.request = control.Request(pid, steps);
  }
  std::erase_if(clients_, [](const Client& c) { return c.fd < 0; });
}

bool OnDemandServer::Answer(const WindowTrace& window) {
  for (Client& c : clients_) {
    if (c.fd < 0 || c.request == 0 || window.info.request != c.request || window.info.pid != c.pid)
      continue;
    const bool json = EndsWith(c.output, ".json") || EndsWith(c.output, ".json.gz");
    Status s = ExportTrace(*window.trace, json ? "chrome" : "profsh", c.output);
    if (!s.ok()) {
      Reply(c, "error: " + s.message());
    } else {
      Reply(c, "ok " + std::to_string(window.info.first_step) + " " +
                   std::to_string(window.info.last_step) + " " + c.output);
    }
    std::erase_if(clients_, [](const Client& x) { return x.fd < 0; });
    return true;
  }
  return false;
}

std::vector<OnDemandServer::DumpRequest> OnDemandServer::TakeDumpRequests() {
  std::vector<DumpRequest> out;
  for (Client& c : clients_) {
    if (c.fd < 0 || !c.dump || c.taken) continue;
    c.taken = true;
    out.push_back(DumpRequest{c.id, c.pid});
  }
  return out;
}

void OnDemandServer::Dumped(uint64_t client, const Result<std::vector<std::string>>& paths) {
  for (Client& c : clients_) {
    if (c.id != client || c.fd < 0) continue;
    if (!paths.ok()) {
      Reply(c, "error: " + paths.error().message);
    } else {
      // Tab-separated: a path may hold spaces, not tabs or newlines (AtomicWriter's names).
      std::string line = "dumped";
      for (const std::string& p : paths.value()) line += "\t" + p;
      Reply(c, line);
    }
  }
  std::erase_if(clients_, [](const Client& x) { return x.fd < 0; });
}

void OnDemandServer::Close(const std::string& why) {
  for (Client& c : clients_) {
    if (c.fd >= 0) Reply(c, "error: " + why);
  }
  clients_.clear();
}

namespace {

// The control socket of PID's session, connected; PID's session folder is in its environment
// (readable by the same user only).
Result<int> ConnectToSession(int64_t pid) {
  std::string env_path = "/proc/" + std::to_string(pid) + "/environ";
  int fd = open(env_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{"process " + std::to_string(pid) + ": " + strerror(errno)};
  std::string env;
  char buf[65536];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) env.append(buf, static_cast<size_t>(n));
  close(fd);
  std::string session;
  const std::string key = std::string(stream::kEnvSession) + "=";
  for (size_t pos = 0; pos < env.size();) {
    size_t end = env.find('\0', pos);
    if (end == std::string::npos) end = env.size();
    if (env.compare(pos, key.size(), key) == 0)
      session = env.substr(pos + key.size(), end - pos - key.size());
    pos = end + 1;
  }
  if (session.empty()) {
    return Error{"process " + std::to_string(pid) + " was not started by profsh run (no " +
                 stream::kEnvSession + ")"};
  }
  auto addr = SocketAddress(session + "/" + kControlSocket);
  if (!addr.ok()) return addr.error();
  int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0) return Error{std::string("socket: ") + strerror(errno)};
  if (connect(sock, reinterpret_cast<const sockaddr*>(&addr.value()), sizeof(sockaddr_un)) != 0) {
    int err = errno;
    close(sock);
    return Error{"process " + std::to_string(pid) +
                 " does not take on-demand requests (start it with profsh run " +
                 "--on-demand or --flight-recorder): " + strerror(err)};
  }
  return sock;
}

// Sends `request` and reads the one-line reply; an empty reply when `timeout_s` (0: none) ran
// out (*timed_out) or the server closed without one.
Result<std::string> Exchange(int sock, const std::string& request, double timeout_s,
                             bool* timed_out) {
  *timed_out = false;
  if (write(sock, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    close(sock);
    return Error{std::string("cannot send the request: ") + strerror(errno)};
  }
  std::string reply;
  char buf[4096];
  auto start = std::chrono::steady_clock::now();
  while (reply.find('\n') == std::string::npos) {
    int wait_ms = -1;
    if (timeout_s > 0) {
      double left = timeout_s -
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (left <= 0) {
        *timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(left * 1000) + 1;
    }
    pollfd p{sock, POLLIN, 0};
    int r = poll(&p, 1, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) continue;
    ssize_t got = read(sock, buf, sizeof buf);
    if (got <= 0) break;
    reply.append(buf, static_cast<size_t>(got));
  }
  close(sock);
  return reply.substr(0, reply.find('\n'));
}

}  // namespace

Result<std::string> RequestOnDemandTrace(int64_t pid, int64_t steps, const std::string& output,
                                         double timeout_s) {
  auto sock = ConnectToSession(pid);
  if (!sock.ok()) return sock.error();
  bool timed_out = false;
  auto reply =
      Exchange(sock.value(),
               "trace " + std::to_string(pid) + " " + std::to_string(steps) + " " + output + "\n",
               timeout_s, &timed_out);
  if (!reply.ok()) return reply.error();
  if (timed_out) {
    return Error{"no trace after " + std::to_string(static_cast<int>(timeout_s)) + " s: process " +
                 std::to_string(pid) + " did not reach " + std::to_string(steps) +
                 " more steps (does it mark its steps? profsh run --step-marker)"};
  }
  const std::string& line = reply.value();
  if (line.rfind("ok ", 0) == 0) {
    // "ok FIRST LAST PATH"
    std::istringstream in(line.substr(3));
    int64_t first, last;
    std::string path;
    in >> first >> last;
    std::getline(in >> std::ws, path);
    return path;
  }
  if (line.empty()) return Error{"profsh run closed the connection without a trace"};
  return Error{line};
}

Result<std::vector<std::string>> RequestFlightDump(int64_t pid, double timeout_s) {
  auto sock = ConnectToSession(pid);
  if (!sock.ok()) return sock.error();
  bool timed_out = false;
  auto reply = Exchange(sock.value(), "dump " + std::to_string(pid) + "\n", timeout_s, &timed_out);
  if (!reply.ok()) return reply.error();
  if (timed_out)
    return Error{"no dump after " + std::to_string(static_cast<int>(timeout_s)) + " s"};
  const std::string& line = reply.value();
  if (line.rfind("dumped", 0) == 0) {
    std::vector<std::string> paths;
    for (size_t pos = line.find('\t'); pos != std::string::npos;) {
      const size_t next = line.find('\t', pos + 1);
      paths.push_back(line.substr(pos + 1, next == std::string::npos ? next : next - pos - 1));
      pos = next;
    }
    return paths;
  }
  if (line.empty()) return Error{"profsh run closed the connection without a dump"};
  return Error{line};
}

}  // namespace profsh
