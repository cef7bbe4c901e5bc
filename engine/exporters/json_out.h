// A small buffered JSON emitter for exporters: escapes strings, formats integers and doubles
// without locale or iostreams, and writes microseconds from integer nanoseconds exactly.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "engine/io/atomic_writer.h"

namespace profsh {

class JsonOut {
 public:
  explicit JsonOut(AtomicWriter& out) : out_(&out) {}
  // Text kept for later (fragments an exporter reuses): Flush appends it to *text.
  explicit JsonOut(std::string* text) : text_(text) {}
  ~JsonOut() { Flush(); }

  void Raw(std::string_view s) {
    if (s.size() > kSize - used_) {
      Flush();
      if (s.size() > kSize) {
        Write(s.data(), s.size());
        return;
      }
    }
    std::memcpy(buf_ + used_, s.data(), s.size());
    used_ += s.size();
  }
  void Char(char c) {
    if (used_ == kSize) Flush();
    buf_[used_++] = c;
  }
  void Int(int64_t v) {
    Reserve(24);
    auto r = std::to_chars(buf_ + used_, buf_ + kSize, v);
    used_ = static_cast<size_t>(r.ptr - buf_);
  }
  void UInt(uint64_t v) {
    Reserve(24);
    auto r = std::to_chars(buf_ + used_, buf_ + kSize, v);
    used_ = static_cast<size_t>(r.ptr - buf_);
  }
  // Shortest text that reads back as the same double; always looks like a double ("1.0").
  void Double(double v);
  // Microseconds from nanoseconds: "12" when whole, else "12.345".
  void Micros(int64_t ns) {
    Reserve(32);
    if (ns < 0) {
      buf_[used_++] = '-';
      ns = -ns;
    }
    auto r = std::to_chars(buf_ + used_, buf_ + kSize, ns / 1000);
    used_ = static_cast<size_t>(r.ptr - buf_);
    int64_t frac = ns % 1000;
    if (frac != 0) {
      buf_[used_++] = '.';
      buf_[used_++] = static_cast<char>('0' + frac / 100);
      buf_[used_++] = static_cast<char>('0' + frac / 10 % 10);
      buf_[used_++] = static_cast<char>('0' + frac % 10);
    }
  }
  void String(std::string_view s);
  void Flush() {
    if (used_ > 0) Write(buf_, used_);
    used_ = 0;
  }

 private:
  static constexpr size_t kSize = 1 << 16;
  void Reserve(size_t n) {
    if (kSize - used_ < n) Flush();
  }
  void Write(const char* data, size_t size) {
    if (text_ != nullptr) {
      text_->append(data, size);
    } else {
      out_->Write(data, size);
    }
  }
  AtomicWriter* out_ = nullptr;
  std::string* text_ = nullptr;
  char buf_[kSize];
  size_t used_ = 0;
};

}  // namespace profsh
