#include "engine/serve/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace profsh::serve {

namespace {

constexpr size_t kMaxHead = 16384;
constexpr int kReceiveTimeoutSeconds = 10;

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Reads up to the blank line ending the head. 0: got it; otherwise the status to answer with
// (-1: the peer went away, answer nothing).
int ReadHead(int fd, std::string* head) {
  char buffer[4096];
  while (head->find("\r\n\r\n") == std::string::npos) {
    if (head->size() > kMaxHead) return 431;
    ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return head->empty() ? -1 : 408;
    if (n <= 0) return head->empty() ? -1 : 400;
    head->append(buffer, static_cast<size_t>(n));
  }
  size_t end = head->find("\r\n\r\n");
  if (end > kMaxHead) return 431;
  head->resize(end + 2);
  return 0;
}

void SendResponse(int fd, const HttpResponse& response, bool with_body) {
  if (response.file_path.empty()) {
    std::string out = ResponseHead(response, response.body.size());
    if (with_body) out += response.body;
    WriteAll(fd, out.data(), out.size());
    return;
  }
  int file = open(response.file_path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (file < 0 || fstat(file, &st) != 0) {
    if (file >= 0) close(file);
    HttpResponse error = ErrorResponse(404, "the file went away");
    SendResponse(fd, error, with_body);
    return;
  }
  std::string head = ResponseHead(response, static_cast<size_t>(st.st_size));
  if (WriteAll(fd, head.data(), head.size()) && with_body) {
    std::vector<char> chunk(1 << 20);
    for (;;) {
      ssize_t n = read(file, chunk.data(), chunk.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || !WriteAll(fd, chunk.data(), static_cast<size_t>(n))) break;
    }
  }
  close(file);
}

}  // namespace

HttpServer::~HttpServer() {
  if (listen_fd_ >= 0) close(listen_fd_);
}

Status HttpServer::Listen(const std::string& host, int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1)
    return Error{"--host " + host + ": not a numeric IPv4 address (e.g. 127.0.0.1 or 0.0.0.0)"};
  if (port < 0 || port > 65535) return Error{"--port " + std::to_string(port) + ": out of range"};
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return Error{std::string("socket: ") + std::strerror(errno)};
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    return Error{"cannot listen on " + host + ":" + std::to_string(port) + ": " +
                 std::strerror(errno)};
  if (listen(listen_fd_, 256) != 0) return Error{std::string("listen: ") + std::strerror(errno)};
  socklen_t length = sizeof address;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
  return Status::Ok();
}

void HttpServer::HandleConnection(int fd) {
  timeval timeout{kReceiveTimeoutSeconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  std::string head;
  int read_status = ReadHead(fd, &head);
  if (read_status < 0) return;
  HttpRequest request;
  int status = read_status;
  std::string why = status == 431   ? "the request head is longer than 16384 bytes"
                    : status == 408 ? "the request head did not arrive in time"
                                    : "the connection closed inside the request head";
  if (status == 0 && !ParseRequestHead(head, &request, &status, &why)) {
    // status and why say what was wrong
  } else if (status == 0) {
    HttpResponse response;
    try {
      response = handler_(request);
    } catch (const std::exception& e) {
      response = ErrorResponse(500, e.what());
    }
    SendResponse(fd, response, request.method != "HEAD");
    return;
  }
  SendResponse(fd, ErrorResponse(status, why), true);
  // Unread request bytes at close() would reset the connection before the client reads the
  // answer: say we are done writing, then read what is left for a moment.
  shutdown(fd, SHUT_WR);
  timeval drain{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &drain, sizeof drain);
  char sink[4096];
  for (int i = 0; i < 64 && recv(fd, sink, sizeof sink, 0) > 0; ++i) {
  }
}

void HttpServer::Serve(const std::atomic<bool>& stop) {
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<int> pending;
  bool done = false;
  std::vector<std::thread> workers;
  for (int i = 0; i < threads_; ++i) {
    workers.emplace_back([&] {
      for (;;) {
        int fd;
        {
          std::unique_lock lock(mutex);
          ready.wait(lock, [&] { return done || !pending.empty(); });
          if (pending.empty()) return;
          fd = pending.front();
          pending.pop_front();
        }
        HandleConnection(fd);
        close(fd);
      }
    });
  }
  while (!stop.load()) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::lock_guard lock(mutex);
    pending.push_back(fd);
    ready.notify_one();
  }
  {
    std::lock_guard lock(mutex);
    done = true;
  }
  ready.notify_all();
  for (auto& w : workers) w.join();
}

}  // namespace profsh::serve
