// HTTP/1.1 messages as the server needs them: a request head parsed with every failure mapped
// to the status it earns (never an exception), and a response serialised for one connection.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace profsh::serve {

struct HttpRequest {
  std::string method;
  std::string target;  // as sent: path and query
  std::string path;    // percent-decoded, without the query
  std::map<std::string, std::string> query;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::string file_path;  // when set, the body is this file, streamed (downloads)
  std::string download_name;
};

// Parses a request head (request line and headers, up to the blank line). On a malformed one
// returns false with *status (400, 405, 414, 505) and *why set.
bool ParseRequestHead(std::string_view head, HttpRequest* request, int* status, std::string* why);

// Decodes %XX and, in a query, '+'; false on a truncated or non-hex escape or a decoded NUL.
bool PercentDecode(std::string_view text, bool plus_is_space, std::string* out);

HttpResponse ErrorResponse(int status, std::string_view why);
const char* StatusText(int status);
// Status line and headers of `response` with `content_length` bytes to follow.
std::string ResponseHead(const HttpResponse& response, size_t content_length);

}  // namespace profsh::serve
