// A small HTTP/1.1 server: one listening socket, a fixed pool of worker threads, one request per
// connection (Connection: close). Written for profsh serve rather than taken from a library
// (docs/INTERNALS.md says why): it serves GET/HEAD of pages, JSON and files, nothing more.
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "engine/serve/http_message.h"
#include "engine/util/result.h"

namespace profsh::serve {

using RequestHandler = std::function<HttpResponse(const HttpRequest&)>;

class HttpServer {
 public:
  HttpServer(RequestHandler handler, int threads)
      : handler_(std::move(handler)), threads_(threads) {}
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds host:port (port 0: a free one, see port()). host is a numeric IPv4 address.
  Status Listen(const std::string& host, int port);
  int port() const { return port_; }
  // Answers requests until *stop becomes true (checked several times a second).
  void Serve(const std::atomic<bool>& stop);

 private:
  void HandleConnection(int fd);

  RequestHandler handler_;
  int threads_;
  int listen_fd_ = -1;
  int port_ = 0;
};

}  // namespace profsh::serve
