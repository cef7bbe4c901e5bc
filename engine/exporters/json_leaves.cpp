#include "engine/exporters/json_leaves.h"

#include "engine/util/json_scan.h"

namespace profsh::sqlite {

namespace {

class LeafWalker {
 public:
  LeafWalker(std::string_view json, const std::function<void(const JsonLeaf&)>& leaf)
      : p_(json.data()), end_(json.data() + json.size()), leaf_(leaf) {}

  bool Value(std::string& key, std::string& flat_key) {
    SkipSpace();
    if (p_ >= end_) return false;
    const char c = *p_;
    if (c == '{') return Object(key, flat_key);
    if (c == '[') return Array(key, flat_key);
    ArgValue v;
    text_.clear();
    if (c == '"') {
      if (!String(&text_)) return false;
      v.type = ArgType::kString;
    } else if (Literal("true")) {
      v.type = ArgType::kBool;
      v.bool_value = true;
    } else if (Literal("false")) {
      v.type = ArgType::kBool;
    } else if (Literal("null")) {
      return true;
    } else if (!Number(&v)) {
      return false;
    }
    leaf_(JsonLeaf{key, flat_key, v, text_});
    return true;
  }

  bool AtEnd() {
    SkipSpace();
    return p_ == end_;
  }

 private:
  bool Object(std::string& key, std::string& flat_key) {
    ++p_;
    const size_t key_size = key.size(), flat_size = flat_key.size();
    SkipSpace();
    if (p_ < end_ && *p_ == '}') return ++p_, true;
    for (;;) {
      SkipSpace();
      std::string member;
      if (p_ >= end_ || *p_ != '"' || !String(&member)) return false;
      SkipSpace();
      if (p_ >= end_ || *p_++ != ':') return false;
      key.append(".").append(member);
      flat_key.append(".").append(member);
      const bool ok = Value(key, flat_key);
      key.resize(key_size);
      flat_key.resize(flat_size);
      if (!ok) return false;
      SkipSpace();
      if (p_ < end_ && *p_ == ',') {
        ++p_;
        continue;
      }
      if (p_ < end_ && *p_ == '}') return ++p_, true;
      return false;
    }
  }

  bool Array(std::string& key, std::string& flat_key) {
    ++p_;
    const size_t key_size = key.size();
    SkipSpace();
    if (p_ < end_ && *p_ == ']') return ++p_, true;
    size_t index = 0;
    for (;;) {
      SkipSpace();
      // A null element takes no index (Perfetto skips it before numbering).
      if (Literal("null")) {
        // nothing
      } else {
        key.append("[").append(std::to_string(index++)).append("]");
        const bool ok = Value(key, flat_key);
        key.resize(key_size);
        if (!ok) return false;
      }
      SkipSpace();
      if (p_ < end_ && *p_ == ',') {
        ++p_;
        continue;
      }
      if (p_ < end_ && *p_ == ']') return ++p_, true;
      return false;
    }
  }

  bool String(std::string* out) {
    const char* begin = ++p_;
    while (p_ < end_ && *p_ != '"') p_ += *p_ == '\\' ? 2 : 1;
    if (p_ >= end_) return false;
    json::DecodeString(begin, p_, out);
    ++p_;
    return true;
  }

  bool Literal(std::string_view word) {
    if (static_cast<size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word)
      return false;
    p_ += word.size();
    return true;
  }

  bool Number(ArgValue* v) {
    const char* begin = p_;
    bool is_integer = true;
    if (p_ < end_ && *p_ == '-') ++p_;
    const char* digits = p_;
    while (p_ < end_ && (json::IsDigit(*p_) || *p_ == '.' || *p_ == 'e' || *p_ == 'E' ||
                         *p_ == '+' || *p_ == '-')) {
      if (!json::IsDigit(*p_)) is_integer = false;
      ++p_;
    }
    if (p_ == digits || !json::IsDigit(*digits)) return false;
    const json::Number n = json::ConvertNumber(begin, p_, is_integer);
    switch (n.kind) {
      case json::NumberKind::kInt:
        v->type = ArgType::kInt;
        v->int_value = n.i;
        break;
      case json::NumberKind::kUInt:
        v->type = ArgType::kUInt;
        v->int_value = n.i;
        break;
      case json::NumberKind::kDouble:
        v->type = ArgType::kDouble;
        v->double_value = n.d;
        break;
    }
    return true;
  }

  void SkipSpace() {
    while (p_ < end_ && json::IsSpace(*p_)) ++p_;
  }

  const char* p_;
  const char* end_;
  const std::function<void(const JsonLeaf&)>& leaf_;
  std::string text_;
};

}  // namespace

bool ForEachJsonLeaf(std::string_view json, const std::string& key,
                     const std::function<void(const JsonLeaf&)>& leaf) {
  std::string leaf_key = key, flat_key = key;
  LeafWalker walker(json, leaf);
  return walker.Value(leaf_key, flat_key) && walker.AtEnd();
}

}  // namespace profsh::sqlite
