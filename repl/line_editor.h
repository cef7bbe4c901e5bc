// A small line editor for the REPL on a terminal: cursor movement, kill/yank-free editing
// keys (Ctrl-A/E/B/F/K/U/W/L), history (Up/Down, Ctrl-P/N), and Tab completion through a
// callback. Ctrl-C abandons the line, Ctrl-D on an empty line ends input.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace profsh::repl {

struct Completion {
  size_t start = 0;                     // byte offset in the line where the completed word begins
  std::vector<std::string> candidates;  // full replacements for line[start, cursor)
};

class LineEditor {
 public:
  enum class Result { kLine, kEof, kInterrupted };
  using Completer = std::function<Completion(const std::string& line, size_t cursor)>;

  LineEditor(int in_fd, int out_fd);
  Result ReadLine(const std::string& prompt, std::string* line);

  void SetCompleter(Completer completer) { completer_ = std::move(completer); }
  void AddHistory(const std::string& line);
  const std::vector<std::string>& history() const { return history_; }
  void LoadHistory(const std::string& path);
  void AppendHistoryFile(const std::string& path, const std::string& line) const;

 private:
  bool EnableRaw();
  void DisableRaw();
  int ReadByte();
  void Refresh();
  void Write(const std::string& s) const;
  void Complete(bool list_all);
  size_t Columns() const;

  int in_fd_, out_fd_;
  bool raw_ = false;
  std::string prompt_;
  std::string buf_;
  size_t pos_ = 0;  // byte offset of the cursor
  std::vector<std::string> history_;
  size_t history_index_ = 0;
  Completer completer_;
  bool last_was_tab_ = false;
  static constexpr size_t kMaxHistory = 1000;
};

}  // namespace profsh::repl
