// Reading an input's JSON text into a value, and storing each distinct value once.
#include "engine/analysis/function_events/input_values.h"

#include <cstdlib>
#include <optional>

#include "engine/util/json_cursor.h"
#include "engine/util/json_scan.h"

namespace profsh {

namespace {

// A recursive-descent reader that checks the grammar as it goes: the importer's text is valid
// JSON, but arguments also come from .profsh files and hand-built traces.
class Reader {
 public:
  explicit Reader(std::string_view json) : s_(json) {}

  bool ReadWhole(InputValue* out) {
    if (!Read(out, 0)) return false;
    SkipSpace();
    return pos_ == s_.size();
  }

 private:
  static constexpr int kMaxDepth = 64;

  void SkipSpace() {
    while (pos_ < s_.size() && json::IsSpace(s_[pos_])) ++pos_;
  }
  bool Literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  bool Read(InputValue* out, int depth) {
    SkipSpace();
    if (pos_ >= s_.size() || depth >= kMaxDepth) return false;
    const char c = s_[pos_];
    if (c == '[' || c == '{') return ReadContainer(out, depth, c == '{');
    if (c == '"') {
      out->type = InputValue::Type::kString;
      return ReadString(&out->text);
    }
    if (c == '-' || json::IsDigit(c)) return ReadNumber(out);
    if (Literal("true") || Literal("false")) {
      out->type = InputValue::Type::kBool;
      out->integer = c == 't';
      return true;
    }
    if (Literal("null")) {
      out->type = InputValue::Type::kNone;
      return true;
    }
    return false;
  }

  bool ReadContainer(InputValue* out, int depth, bool dict) {
    const char close = dict ? '}' : ']';
    out->type = dict ? InputValue::Type::kDict : InputValue::Type::kList;
    ++pos_;
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == close) {
      ++pos_;
      return true;
    }
    while (true) {
      if (dict) {
        SkipSpace();
        InputValue key;
        key.type = InputValue::Type::kString;
        if (pos_ >= s_.size() || s_[pos_] != '"' || !ReadString(&key.text)) return false;
        SkipSpace();
        if (pos_ >= s_.size() || s_[pos_] != ':') return false;
        ++pos_;
        out->items.push_back(std::move(key));
      }
      out->items.emplace_back();
      if (!Read(&out->items.back(), depth + 1)) return false;
      SkipSpace();
      if (pos_ >= s_.size()) return false;
      if (s_[pos_] == close) {
        ++pos_;
        return true;
      }
      if (s_[pos_] != ',') return false;
      ++pos_;
    }
  }

  // At the opening quote.
  bool ReadString(std::string* out) {
    const std::optional<size_t> close = json::FindStringEnd(s_, pos_);
    if (!close) return false;
    json::DecodeString(s_.data() + pos_ + 1, s_.data() + *close, out);
    pos_ = *close + 1;
    return true;
  }

  bool ReadNumber(InputValue* out) {
    const size_t begin = pos_;
    auto digits = [&] {
      const size_t from = pos_;
      while (pos_ < s_.size() && json::IsDigit(s_[pos_])) ++pos_;
      return pos_ > from;
    };
    if (s_[pos_] == '-') ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '0') {
      ++pos_;
    } else if (!digits()) {
      return false;
    }
    bool integer = true;
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      integer = false;
      if (!digits()) return false;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      integer = false;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!digits()) return false;
    }
    const char* first = s_.data() + begin;
    const char* last = s_.data() + pos_;
    const json::Number n = json::ConvertNumber(first, last, integer);
    switch (n.kind) {
      case json::NumberKind::kInt:
        out->type = InputValue::Type::kInt;
        out->integer = n.i;
        return true;
      case json::NumberKind::kUInt:
        out->type = InputValue::Type::kUInt;
        out->integer = n.i;
        return true;
      case json::NumberKind::kDouble:
        out->type = InputValue::Type::kFloat;
        // Out of a double's range: Python's json gives inf (or 0.0), as strtod does.
        out->real = std::strtod(std::string(first, last).c_str(), nullptr);
        return true;
    }
    return false;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

// A byte string equal for two values exactly when their reprs are equal: the type, then the
// payload, lists by their length.
void AppendKey(const InputValue& v, std::string* out) {
  out->push_back(static_cast<char>(v.type));
  switch (v.type) {
    case InputValue::Type::kBool:
    case InputValue::Type::kInt:
    case InputValue::Type::kUInt:
      out->append(reinterpret_cast<const char*>(&v.integer), sizeof v.integer);
      return;
    case InputValue::Type::kFloat:  // two doubles print alike exactly when their bits agree
      out->append(reinterpret_cast<const char*>(&v.real), sizeof v.real);
      return;
    case InputValue::Type::kString:
    case InputValue::Type::kText: {
      const uint64_t size = v.text.size();
      out->append(reinterpret_cast<const char*>(&size), sizeof size);
      out->append(v.text);
      return;
    }
    case InputValue::Type::kList:
    case InputValue::Type::kDict: {
      const uint64_t size = v.items.size();
      out->append(reinterpret_cast<const char*>(&size), sizeof size);
      for (const InputValue& item : v.items) AppendKey(item, out);
      return;
    }
    case InputValue::Type::kNone:
      return;
  }
}

}  // namespace

InputValue ParseInputValue(std::string_view json) {
  InputValue value;
  if (Reader(json).ReadWhole(&value)) return value;
  InputValue text;
  text.type = InputValue::Type::kText;
  text.text = std::string(json);
  return text;
}

InputValueTable::InputValueTable() {
  Intern(InputValue{});  // id 0: []
}

uint32_t InputValueTable::Intern(InputValue value) {
  std::string key;
  AppendKey(value, &key);
  auto [it, inserted] = id_of_key_.emplace(std::move(key), static_cast<uint32_t>(values_.size()));
  if (inserted) values_.push_back(std::move(value));
  return it->second;
}

uint32_t InputValueTable::InternJson(uint32_t text_id, std::string_view json) {
  auto it = id_of_text_.find(text_id);
  if (it != id_of_text_.end()) return it->second;
  const uint32_t id = Intern(ParseInputValue(json));
  id_of_text_.emplace(text_id, id);
  return id;
}

}  // namespace profsh
