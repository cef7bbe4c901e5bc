// What the profsh commands share on their command lines: `--opt=value` as well as `--opt value`,
// and usage errors as one line plus a hint (with a "did you mean" for a mistyped option), exit 2.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace profsh::repl {

// Exit status of every usage error, as getopt-based tools use.
inline constexpr int kUsageError = 2;

// A command that was used right but failed (a trace that does not load, a query SQLite
// rejects): "profsh COMMAND: MESSAGE" on stderr; returns the exit status, 1.
int CommandFailed(const char* command, const std::string& message);

class CommandLine {
 public:
  // `command` names the command in messages ("profsh run"); `options` lists every option it
  // takes (for suggestions).
  CommandLine(std::string command, int argc, char** argv, std::vector<std::string> options);

  // Moves to the next argument; false at the end. Sets option() (without an inline value).
  bool Next();
  int index() const { return index_; }
  const std::string& arg() const { return arg_; }
  bool IsOption() const { return arg_.size() > 1 && arg_[0] == '-'; }
  // The option's value: the text after '=' or the next argument. Exits 2 when there is none.
  std::string Value(const char* what);
  // A whole number >= minimum; exits 2 otherwise.
  long long Number(long long minimum);
  // Whether the option came with "=value".
  bool HasInlineValue() const { return inline_value_.has_value(); }
  // A flag must not be given a value ("--no-table=1"); exits 2 if it was.
  void Flag();
  // "unknown option '--rowlimit'; did you mean '--row-limit'?", then the hint; exits 2.
  [[noreturn]] void Unknown() const { Unknown(arg_); }
  [[noreturn]] void Unknown(const std::string& option) const;
  // MESSAGE, then "(profsh run --help lists the options)"; exits 2.
  [[noreturn]] void Fail(const std::string& message) const;

 private:
  std::string command_;
  int argc_;
  char** argv_;
  std::vector<std::string> options_;
  int index_ = 0;
  std::string arg_;
  std::optional<std::string> inline_value_;
};

}  // namespace profsh::repl
