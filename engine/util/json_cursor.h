// A cursor over a small piece of JSON text that the trace model keeps (a list argument, the
// deviceProperties metadata): read value by value, without building a document. The trace's
// own tokenizer (engine/importers/json_tokenizer) validates whole files; this reads texts that
// passed it, and on anything else stops without reading past the text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace profsh::json {

// Where the string whose opening quote is at text[open] ends (its closing quote), every escape
// checked (DecodeString trusts its input); nullopt when it is not a well-formed string.
std::optional<size_t> FindStringEnd(std::string_view text, size_t open);

class Cursor {
 public:
  explicit Cursor(std::string_view text) : s_(text) {}

  // The next significant byte ('\0' at the end), whitespace skipped.
  char Peek();
  // Consumes c when it is the next significant byte.
  bool Consume(char c);
  bool AtEnd() { return Peek() == '\0'; }

  // A string, decoded; nullopt (nothing consumed) when the next value is not a string, or
  // (the rest consumed) when it is not a well-formed one.
  std::optional<std::string> String();
  // An integer; nullopt for any other value (fractions and exponents included), which is
  // skipped.
  std::optional<int64_t> Int();
  // Skips one value of any kind; false on text that is not JSON.
  bool Skip();

  // The items of a list: calls item() at each one, which must read it; false when the text is
  // not a list.
  template <typename Item>
  bool List(Item item) {
    if (!Consume('[')) return false;
    if (Consume(']')) return true;
    do {
      const size_t before = p_;
      item();
      if (p_ == before && !Skip()) return false;  // an item nobody read: never loop in place
    } while (Consume(','));
    return Consume(']');
  }

 private:
  std::string_view s_;
  size_t p_ = 0;
};

}  // namespace profsh::json
