#include "engine/analysis/model/typed_args.h"

#include <charconv>
#include <unordered_map>

#include "engine/trace/kineto_schema.h"
#include "engine/util/json_scan.h"
#include "engine/util/utf8.h"

namespace profsh {

namespace {

// A reader of the compact JSON the importer keeps for lists: numbers, strings, nested lists.
class ListReader {
 public:
  explicit ListReader(std::string_view json) : s_(json) {}
  void SkipSpace() {
    while (p_ < s_.size() && json::IsSpace(s_[p_])) ++p_;
  }
  bool Consume(char c) {
    SkipSpace();
    if (p_ < s_.size() && s_[p_] == c) {
      ++p_;
      return true;
    }
    return false;
  }
  char Peek() {
    SkipSpace();
    return p_ < s_.size() ? s_[p_] : '\0';
  }
  // The items of a list: calls item() at each one; false when the text is not a list.
  template <typename Item>
  bool List(Item item) {
    if (!Consume('[')) return false;
    if (Consume(']')) return true;
    do {
      item();
    } while (Consume(','));
    return Consume(']');
  }
  std::optional<int64_t> Int() {
    SkipSpace();
    int64_t v = 0;
    auto [end, ec] = std::from_chars(s_.data() + p_, s_.data() + s_.size(), v);
    const size_t used = static_cast<size_t>(end - (s_.data() + p_));
    if (ec != std::errc() ||
        (p_ + used < s_.size() &&
         (s_[p_ + used] == '.' || s_[p_ + used] == 'e' || s_[p_ + used] == 'E'))) {
      SkipValue();
      return std::nullopt;
    }
    p_ += used;
    return v;
  }
  std::string String() {
    std::string out;
    if (!Consume('"')) {
      SkipValue();
      return out;
    }
    while (p_ < s_.size() && s_[p_] != '"') {
      char c = s_[p_++];
      if (c != '\\' || p_ >= s_.size()) {
        out.push_back(c);
        continue;
      }
      char e = s_[p_++];
      switch (e) {
        case 'n':
          out.push_back('\n');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'u': {
          uint32_t cp = 0;
          if (p_ + 4 <= s_.size()) std::from_chars(s_.data() + p_, s_.data() + p_ + 4, cp, 16);
          p_ += 4;
          // A surrogate pair: the low half follows as another \u escape.
          if (cp >= 0xD800 && cp < 0xDC00 && p_ + 6 <= s_.size() && s_[p_] == '\\' &&
              s_[p_ + 1] == 'u') {
            uint32_t low = 0;
            std::from_chars(s_.data() + p_ + 2, s_.data() + p_ + 6, low, 16);
            if (low >= 0xDC00 && low < 0xE000) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
              p_ += 6;
            }
          }
          AppendUtf8(out, static_cast<char32_t>(cp));
          break;
        }
        default:
          out.push_back(e);  // \" \\ \/
      }
    }
    ++p_;
    return out;
  }
  // Skips one value of any kind.
  void SkipValue() {
    SkipSpace();
    int depth = 0;
    bool in_string = false;
    for (; p_ < s_.size(); ++p_) {
      const char c = s_[p_];
      if (in_string) {
        if (c == '\\')
          ++p_;
        else if (c == '"')
          in_string = false;
        continue;
      }
      if (c == '"')
        in_string = true;
      else if (c == '[' || c == '{')
        ++depth;
      else if (c == ']' || c == '}') {
        if (depth == 0) return;
        if (--depth == 0) {
          ++p_;
          return;
        }
      } else if (c == ',' && depth == 0) {
        return;
      }
    }
  }

 private:
  std::string_view s_;
  size_t p_ = 0;
};

// The sizes in a list of numbers; false when an item is not an integer.
bool ReadSizes(ListReader& in, std::vector<int64_t>* sizes, bool* nested) {
  bool ok = true;
  const bool list = in.List([&] {
    if (in.Peek() == '[') {
      *nested = true;
      in.SkipValue();
      return;
    }
    auto v = in.Int();
    if (v)
      sizes->push_back(*v);
    else
      ok = false;
  });
  return list && ok;
}

}  // namespace

std::vector<InputShape> ParseInputShapes(std::string_view json) {
  std::vector<InputShape> inputs;
  ListReader in(json);
  in.List([&] {
    InputShape shape;
    if (in.Peek() != '[') {
      shape.kind = InputShape::Kind::kOther;
      in.SkipValue();
      inputs.push_back(std::move(shape));
      return;
    }
    // A tensor's sizes, or a list whose items are lists (a tensor list): read it twice over is
    // not possible with one reader, so look at the first item.
    ListReader probe = in;
    probe.Consume('[');
    if (probe.Peek() == '[') {
      shape.kind = InputShape::Kind::kList;
      bool ok = in.List([&] {
        std::vector<int64_t> sizes;
        bool nested = false;
        if (!ReadSizes(in, &sizes, &nested) || nested) shape.kind = InputShape::Kind::kOther;
        shape.list.push_back(std::move(sizes));
      });
      if (!ok) shape.kind = InputShape::Kind::kOther;
      if (shape.kind == InputShape::Kind::kOther) shape.list.clear();
    } else {
      bool nested = false;
      if (!ReadSizes(in, &shape.sizes, &nested) || nested) {
        shape.kind = InputShape::Kind::kOther;
        shape.sizes.clear();
      }
    }
    inputs.push_back(std::move(shape));
  });
  return inputs;
}

std::vector<std::string> ParseStringList(std::string_view json) {
  std::vector<std::string> out;
  ListReader in(json);
  in.List([&] { out.push_back(in.String()); });
  return out;
}

TypedArgs::TypedArgs(const Trace& trace)
    : trace_(trace),
      reader_(trace, {kineto::kCorrelation, kineto::kExternalId, kineto::kDevice, kineto::kStream,
                      kineto::kSequenceNumber, kineto::kCopyBytes, kineto::kMemoryBandwidth,
                      kineto::kGrid, kineto::kBlock, kineto::kBlocksPerSm,
                      kineto::kAchievedOccupancy, kineto::kInputDims, kineto::kInputType}) {
  static_assert(static_cast<size_t>(KnownArg::kCount) == 11);
  constexpr size_t kDims = 11, kTypes = 12;  // after the KnownArgs in the reader's keys
  const uint32_t schemas = trace.args.schema_count();
  shapes_of_schema_.assign(schemas, kNone);
  types_of_schema_.assign(schemas, kNone);
  // Shapes and dtypes are schema constants: each distinct text is parsed once.
  std::unordered_map<uint32_t, uint32_t> shapes_of_text, types_of_text;
  for (uint32_t schema = 0; schema < schemas; ++schema) {
    ArgValue v;
    if (reader_.GetSchemaConstant(schema, kDims, &v) && v.type == ArgType::kJson) {
      auto [it, added] = shapes_of_text.try_emplace(v.str, static_cast<uint32_t>(shapes_.size()));
      if (added) shapes_.push_back(ParseInputShapes(trace.str(v.str)));
      shapes_of_schema_[schema] = it->second;
    }
    if (reader_.GetSchemaConstant(schema, kTypes, &v) && v.type == ArgType::kJson) {
      auto [it, added] = types_of_text.try_emplace(v.str, static_cast<uint32_t>(types_.size()));
      if (added) types_.push_back(ParseStringList(trace.str(v.str)));
      types_of_schema_[schema] = it->second;
    }
  }
}

std::optional<int64_t> TypedArgs::Int(size_t event, KnownArg arg) const {
  int64_t v;
  if (reader_.GetInt(trace_.events.args(event), static_cast<size_t>(arg), &v)) return v;
  return std::nullopt;
}

std::optional<double> TypedArgs::Number(size_t event, KnownArg arg) const {
  ArgValue v;
  if (reader_.Get(trace_.events.args(event), static_cast<size_t>(arg), &v) && v.is_number())
    return v.AsDouble();
  return std::nullopt;
}

std::string_view TypedArgs::Text(size_t event, KnownArg arg) const {
  ArgValue v;
  if (!reader_.Get(trace_.events.args(event), static_cast<size_t>(arg), &v)) return {};
  if (v.type == ArgType::kString || v.type == ArgType::kJson) return trace_.str(v.str);
  return {};
}

}  // namespace profsh
