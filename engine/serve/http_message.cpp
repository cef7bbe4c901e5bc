#include "engine/serve/http_message.h"

#include <cctype>

namespace profsh::serve {

namespace {

constexpr size_t kMaxTarget = 8192;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool ParseQuery(std::string_view text, std::map<std::string, std::string>* out) {
  while (!text.empty()) {
    size_t amp = text.find('&');
    std::string_view pair = text.substr(0, amp);
    text = amp == std::string_view::npos ? std::string_view() : text.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string key, value;
    if (!PercentDecode(pair.substr(0, eq), true, &key)) return false;
    if (eq != std::string_view::npos && !PercentDecode(pair.substr(eq + 1), true, &value))
      return false;
    (*out)[key] = value;
  }
  return true;
}

bool Fail(int code, std::string_view message, int* status, std::string* why) {
  *status = code;
  *why = message;
  return false;
}

}  // namespace

bool PercentDecode(std::string_view text, bool plus_is_space, std::string* out) {
  out->clear();
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return false;
      int hi = HexValue(text[i + 1]), lo = HexValue(text[i + 2]);
      if (hi < 0 || lo < 0) return false;
      c = static_cast<char>(hi * 16 + lo);
      if (c == '\0') return false;
      i += 2;
    } else if (c == '+' && plus_is_space) {
      c = ' ';
    }
    out->push_back(c);
  }
  return true;
}

bool ParseRequestHead(std::string_view head, HttpRequest* request, int* status, std::string* why) {
  size_t line_end = head.find("\r\n");
  std::string_view line = head.substr(0, line_end);
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos ||
      line.find(' ', sp2 + 1) != std::string_view::npos)
    return Fail(400, "the request line is not 'METHOD TARGET HTTP/1.x'", status, why);
  request->method = std::string(line.substr(0, sp1));
  request->target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
  std::string_view version = line.substr(sp2 + 1);
  for (char c : request->method)
    if (!std::isupper(static_cast<unsigned char>(c)))
      return Fail(400, "the method is not a token of capital letters", status, why);
  if (version.substr(0, 5) != "HTTP/")
    return Fail(400, "the request line does not end with HTTP/1.x", status, why);
  if (version != "HTTP/1.0" && version != "HTTP/1.1")
    return Fail(505, "only HTTP/1.0 and HTTP/1.1 are served", status, why);
  if (request->target.size() > kMaxTarget)
    return Fail(414, "the request target is longer than 8192 bytes", status, why);
  if (request->target.empty() || request->target[0] != '/')
    return Fail(400, "the request target must be a path starting with '/'", status, why);
  for (char c : request->target)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f)
      return Fail(400, "the request target holds a control character", status, why);
  if (request->method != "GET" && request->method != "HEAD")
    return Fail(405, "only GET and HEAD are served", status, why);
  size_t q = request->target.find('?');
  std::string_view target = request->target;
  if (!PercentDecode(target.substr(0, q), false, &request->path))
    return Fail(400, "the path holds a malformed %-escape", status, why);
  request->query.clear();
  if (q != std::string_view::npos && !ParseQuery(target.substr(q + 1), &request->query))
    return Fail(400, "the query holds a malformed %-escape", status, why);
  // Every header line must be NAME: VALUE; anything else is a malformed request.
  std::string_view rest = line_end == std::string_view::npos ? "" : head.substr(line_end + 2);
  while (!rest.empty()) {
    size_t end = rest.find("\r\n");
    std::string_view header = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 2);
    if (header.empty()) break;
    size_t colon = header.find(':');
    if (colon == 0 || colon == std::string_view::npos)
      return Fail(400, "a header line has no 'Name:'", status, why);
    for (char c : header.substr(0, colon))
      if (c == ' ' || c == '\t') return Fail(400, "a header name holds white space", status, why);
  }
  return true;
}

const char* StatusText(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 414:
      return "URI Too Long";
    case 422:
      return "Unprocessable Content";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Error";
  }
}

HttpResponse ErrorResponse(int status, std::string_view why) {
  HttpResponse r;
  r.status = status;
  r.body = std::to_string(status) + " " + StatusText(status) + ": " + std::string(why) + "\n";
  return r;
}

std::string ResponseHead(const HttpResponse& response, size_t content_length) {
  std::string head =
      "HTTP/1.1 " + std::to_string(response.status) + " " + StatusText(response.status) + "\r\n";
  head += "Content-Type: " + response.content_type + "\r\n";
  head += "Content-Length: " + std::to_string(content_length) + "\r\n";
  if (!response.download_name.empty())
    head += "Content-Disposition: attachment; filename=\"" + response.download_name + "\"\r\n";
  head += "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n";
  return head;
}

}  // namespace profsh::serve
