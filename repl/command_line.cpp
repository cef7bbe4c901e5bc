#include "repl/command_line.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "engine/util/edit_distance.h"

namespace profsh::repl {

int CommandFailed(const char* command, const std::string& message) {
  std::fprintf(stderr, "profsh %s: %s\n", command, message.c_str());
  return 1;
}

CommandLine::CommandLine(std::string command, int argc, char** argv,
                         std::vector<std::string> options)
    : command_(std::move(command)), argc_(argc), argv_(argv), options_(std::move(options)) {}

bool CommandLine::Next() {
  if (++index_ >= argc_) return false;
  arg_ = argv_[index_];
  inline_value_.reset();
  // Only long options take `=value`; "-o=x" would be ambiguous with a file named "=x".
  if (arg_.size() > 2 && arg_.compare(0, 2, "--") == 0) {
    size_t eq = arg_.find('=');
    if (eq != std::string::npos) {
      inline_value_ = arg_.substr(eq + 1);
      arg_.resize(eq);
    }
  }
  return true;
}

std::string CommandLine::Value(const char* what) {
  if (inline_value_) {
    std::string v = std::move(*inline_value_);
    inline_value_.reset();
    return v;
  }
  if (index_ + 1 >= argc_) Fail(arg_ + " needs " + what);
  return argv_[++index_];
}

long long CommandLine::Number(long long minimum) {
  const std::string option = arg_;
  std::string v = Value(minimum > 0 ? "a positive number" : "a number");
  char* end = nullptr;
  errno = 0;
  long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno == ERANGE || n < minimum) {
    Fail(option + " needs " + (minimum > 0 ? "a positive" : "a non-negative") +
         " whole number, got '" + v + "'");
  }
  return n;
}

void CommandLine::Flag() {
  if (inline_value_) Fail(arg_ + " takes no value (got '" + *inline_value_ + "')");
}

void CommandLine::Unknown(const std::string& option) const {
  // A one-letter option is a letter away from every other one: no hint is better than noise.
  std::string hint = option.size() > 2 ? ClosestName(option, options_) : "";
  Fail("unknown option '" + option + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
}

void CommandLine::Fail(const std::string& message) const {
  std::fprintf(stderr, "%s: %s\n(%s --help lists the options)\n", command_.c_str(), message.c_str(),
               command_.c_str());
  std::exit(kUsageError);
}

}  // namespace profsh::repl
