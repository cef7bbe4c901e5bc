#include "repl/line_editor.h"

#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>

namespace profsh::repl {

namespace {

termios g_saved_termios;

bool IsContinuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

size_t CodePoints(const std::string& s, size_t begin, size_t end) {
  size_t n = 0;
  for (size_t i = begin; i < end; ++i) n += !IsContinuation(s[i]);
  return n;
}

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
         (static_cast<unsigned char>(c) & 0x80);
}

}  // namespace

LineEditor::LineEditor(int in_fd, int out_fd) : in_fd_(in_fd), out_fd_(out_fd) {}

bool LineEditor::EnableRaw() {
  if (tcgetattr(in_fd_, &g_saved_termios) != 0) return false;
  termios raw = g_saved_termios;
  raw.c_iflag &= ~(BRKINT | ICRNL | INPCK | ISTRIP | IXON);
  raw.c_cflag |= CS8;
  raw.c_lflag &= ~(ECHO | ICANON | IEXTEN | ISIG);
  raw.c_cc[VMIN] = 1;
  raw.c_cc[VTIME] = 0;
  if (tcsetattr(in_fd_, TCSAFLUSH, &raw) != 0) return false;
  raw_ = true;
  return true;
}

void LineEditor::DisableRaw() {
  if (raw_) tcsetattr(in_fd_, TCSAFLUSH, &g_saved_termios);
  raw_ = false;
}

int LineEditor::ReadByte() {
  unsigned char c;
  while (true) {
    ssize_t n = read(in_fd_, &c, 1);
    if (n == 1) return c;
    if (n < 0 && errno == EINTR) continue;
    return -1;
  }
}

void LineEditor::Write(const std::string& s) const {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = write(out_fd_, s.data() + done, s.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    done += static_cast<size_t>(n);
  }
}

size_t LineEditor::Columns() const {
  winsize ws;
  if (ioctl(out_fd_, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

void LineEditor::Refresh() {
  // One screen line: if prompt and text do not fit, scroll the text so the cursor stays visible.
  size_t cols = Columns();
  size_t prompt_len = CodePoints(prompt_, 0, prompt_.size());
  size_t start = 0;
  size_t cursor_col = CodePoints(buf_, 0, pos_);
  while (prompt_len + cursor_col >= cols && start < pos_) {
    ++start;
    while (start < buf_.size() && IsContinuation(buf_[start])) ++start;
    cursor_col = CodePoints(buf_, start, pos_);
  }
  size_t end = start;
  size_t shown = 0;
  while (end < buf_.size() && prompt_len + shown < cols - 1) {
    ++end;
    while (end < buf_.size() && IsContinuation(buf_[end])) ++end;
    ++shown;
  }
  std::string out = "\r" + prompt_ + buf_.substr(start, end - start) + "\x1b[0K\r";
  size_t col = prompt_len + cursor_col;
  if (col > 0) out += "\x1b[" + std::to_string(col) + "C";
  Write(out);
}

void LineEditor::Complete(bool list_all) {
  if (!completer_) return;
  Completion c = completer_(buf_, pos_);
  if (c.candidates.empty() || c.start > pos_) {
    Write("\a");
    return;
  }
  std::string common = c.candidates[0];
  for (const auto& cand : c.candidates) {
    size_t k = 0;
    while (k < common.size() && k < cand.size() && common[k] == cand[k]) ++k;
    common.resize(k);
  }
  std::string typed = buf_.substr(c.start, pos_ - c.start);
  if (common.size() > typed.size()) {
    buf_.replace(c.start, pos_ - c.start, common);
    pos_ = c.start + common.size();
    Refresh();
    return;
  }
  if (c.candidates.size() == 1) return;
  if (!list_all) {
    Write("\a");
    return;
  }
  std::vector<std::string> sorted = c.candidates;
  std::sort(sorted.begin(), sorted.end());
  size_t width = 0;
  for (const auto& s : sorted) width = std::max(width, s.size());
  width += 2;
  size_t per_line = std::max<size_t>(1, Columns() / width);
  std::string out = "\r\n";
  for (size_t i = 0; i < sorted.size(); ++i) {
    out += sorted[i];
    if ((i + 1) % per_line == 0 || i + 1 == sorted.size()) {
      out += "\r\n";
    } else {
      out += std::string(width - sorted[i].size(), ' ');
    }
  }
  Write(out);
  Refresh();
}

LineEditor::Result LineEditor::ReadLine(const std::string& prompt, std::string* line) {
  prompt_ = prompt;
  buf_.clear();
  pos_ = 0;
  history_index_ = history_.size();
  std::string saved_current;
  last_was_tab_ = false;
  if (!EnableRaw()) {
    // Not a terminal after all: read plainly.
    Write(prompt);
    std::string s;
    while (true) {
      int c = ReadByte();
      if (c < 0) return s.empty() ? Result::kEof : (*line = s, Result::kLine);
      if (c == '\n') break;
      s.push_back(static_cast<char>(c));
    }
    *line = s;
    return Result::kLine;
  }
  Refresh();
  Result result = Result::kLine;
  while (true) {
    int c = ReadByte();
    if (c < 0) {
      result = buf_.empty() ? Result::kEof : Result::kLine;
      break;
    }
    bool tab = c == '\t';
    if (tab) {
      Complete(last_was_tab_);
      last_was_tab_ = true;
      continue;
    }
    last_was_tab_ = false;
    if (c == '\r' || c == '\n') break;
    if (c == 3) {  // Ctrl-C
      Write("^C");
      result = Result::kInterrupted;
      break;
    }
    if (c == 4) {  // Ctrl-D
      if (buf_.empty()) {
        result = Result::kEof;
        break;
      }
      if (pos_ < buf_.size()) {
        size_t next = pos_ + 1;
        while (next < buf_.size() && IsContinuation(buf_[next])) ++next;
        buf_.erase(pos_, next - pos_);
        Refresh();
      }
      continue;
    }
    if (c == 127 || c == 8) {  // Backspace
      if (pos_ > 0) {
        size_t prev = pos_ - 1;
        while (prev > 0 && IsContinuation(buf_[prev])) --prev;
        buf_.erase(prev, pos_ - prev);
        pos_ = prev;
        Refresh();
      }
      continue;
    }
    auto left = [&] {
      if (pos_ == 0) return;
      --pos_;
      while (pos_ > 0 && IsContinuation(buf_[pos_])) --pos_;
    };
    auto right = [&] {
      if (pos_ >= buf_.size()) return;
      ++pos_;
      while (pos_ < buf_.size() && IsContinuation(buf_[pos_])) ++pos_;
    };
    auto history_move = [&](int delta) {
      if (history_.empty()) return;
      if (history_index_ == history_.size()) saved_current = buf_;
      if (delta < 0 && history_index_ > 0)
        --history_index_;
      else if (delta > 0 && history_index_ < history_.size())
        ++history_index_;
      buf_ = history_index_ == history_.size() ? saved_current : history_[history_index_];
      pos_ = buf_.size();
    };
    if (c == 27) {  // escape sequences
      int a = ReadByte();
      int b = ReadByte();
      if (a == '[') {
        if (b >= '0' && b <= '9') {
          int d = ReadByte();
          if (d == '~') {
            if (b == '3' && pos_ < buf_.size()) {  // Delete
              size_t next = pos_ + 1;
              while (next < buf_.size() && IsContinuation(buf_[next])) ++next;
              buf_.erase(pos_, next - pos_);
            } else if (b == '1' || b == '7') {
              pos_ = 0;
            } else if (b == '4' || b == '8') {
              pos_ = buf_.size();
            }
          }
        } else if (b == 'A') {
          history_move(-1);
        } else if (b == 'B') {
          history_move(1);
        } else if (b == 'C') {
          right();
        } else if (b == 'D') {
          left();
        } else if (b == 'H') {
          pos_ = 0;
        } else if (b == 'F') {
          pos_ = buf_.size();
        }
      } else if (a == 'O') {
        if (b == 'H') pos_ = 0;
        if (b == 'F') pos_ = buf_.size();
      }
      Refresh();
      continue;
    }
    switch (c) {
      case 1:
        pos_ = 0;
        break;  // Ctrl-A
      case 5:
        pos_ = buf_.size();
        break;  // Ctrl-E
      case 2:
        left();
        break;  // Ctrl-B
      case 6:
        right();
        break;  // Ctrl-F
      case 11:
        buf_.erase(pos_);
        break;  // Ctrl-K
      case 21:
        buf_.erase(0, pos_);
        pos_ = 0;
        break;    // Ctrl-U
      case 23: {  // Ctrl-W
        size_t p = pos_;
        while (p > 0 && buf_[p - 1] == ' ') --p;
        while (p > 0 && IsWordChar(buf_[p - 1])) --p;
        buf_.erase(p, pos_ - p);
        pos_ = p;
        break;
      }
      case 12:
        Write("\x1b[H\x1b[2J");
        break;  // Ctrl-L
      case 16:
        history_move(-1);
        break;  // Ctrl-P
      case 14:
        history_move(1);
        break;  // Ctrl-N
      default:
        if (c >= 32 || c == '\t') {
          buf_.insert(buf_.begin() + static_cast<std::ptrdiff_t>(pos_), static_cast<char>(c));
          ++pos_;
        }
    }
    Refresh();
  }
  DisableRaw();
  Write("\r\n");
  *line = buf_;
  return result;
}

void LineEditor::AddHistory(const std::string& line) {
  if (line.empty()) return;
  if (!history_.empty() && history_.back() == line) return;
  history_.push_back(line);
  if (history_.size() > kMaxHistory) history_.erase(history_.begin());
}

void LineEditor::LoadHistory(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) AddHistory(line);
}

void LineEditor::AppendHistoryFile(const std::string& path, const std::string& line) const {
  if (path.empty() || line.empty()) return;
  std::ofstream out(path, std::ios::app);
  out << line << '\n';
}

}  // namespace profsh::repl
