#include "engine/exporters/sqlite_arg_sets.h"

#include <cstring>

namespace profsh::sqlite {

namespace {

const char* ValueType(ArgType type) {
  switch (type) {
    case ArgType::kBool:
      return "bool";
    case ArgType::kInt:
      return "int";
    case ArgType::kUInt:
      return "uint";
    case ArgType::kDouble:
      return "real";
    case ArgType::kString:
      return "string";
    case ArgType::kJson:
      return "json";
    case ArgType::kNull:
      break;
  }
  return "null";
}

template <typename T>
void AppendBytes(std::string& out, const T& v) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  out.append(bytes, sizeof(T));
}

}  // namespace

ArgSetWriter::ArgSetWriter(const Trace& trace, const Database& db)
    : trace_(trace),
      row_(db,
           "INSERT INTO __intrinsic_args (id, arg_set_id, key_id, int_value, string_value, "
           "real_value, value_type) VALUES (?, ?, ?, ?, ?, ?, ?)"),
      key_(db, "INSERT INTO __intrinsic_arg_key (id, key) VALUES (?, ?)") {}

Status ArgSetWriter::status() const {
  if (Status s = key_.status(); !s.ok()) return s;
  return row_.status();
}

int64_t ArgSetWriter::KeyId(uint32_t key) {
  auto [it, inserted] = key_ids_.try_emplace(key, static_cast<int64_t>(key_ids_.size()));
  if (inserted) {
    const std::string text = "args." + std::string(trace_.str(key));
    key_.Int(1, it->second);
    key_.Text(2, text);
    key_.Insert();
  }
  return it->second;
}

int64_t ArgSetWriter::Add(ArgRef ref) {
  if (ref.empty()) return kNone;
  const ArgStore::View view(&trace_.args, ref);
  // The set's content as bytes (key, type, value; strings by their pool id), so that equal
  // sets are found by one hash lookup. Perfetto skips null values.
  content_.clear();
  for (const ArgStore::View::Item item : view) {
    if (item.top_level || item.value.type == ArgType::kNull) continue;
    AppendBytes(content_, item.key);
    AppendBytes(content_, static_cast<uint8_t>(item.value.type));
    switch (item.value.type) {
      case ArgType::kDouble:
        AppendBytes(content_, item.value.double_value);
        break;
      case ArgType::kString:
      case ArgType::kJson:
        AppendBytes(content_, item.value.str);
        break;
      default:
        AppendBytes(content_, item.value.AsInt());
    }
  }
  if (content_.empty()) return kNone;
  auto [it, inserted] = set_of_content_.try_emplace(content_, next_row_);
  if (!inserted) return it->second;
  const int64_t set = next_row_;
  for (const ArgStore::View::Item item : view) {
    if (item.top_level || item.value.type == ArgType::kNull) continue;
    row_.Int(1, next_row_++);
    row_.Int(2, set);
    row_.Int(3, KeyId(item.key));
    row_.Null(4);
    row_.Null(5);
    row_.Null(6);
    switch (item.value.type) {
      case ArgType::kBool:
        row_.Int(4, item.value.bool_value ? 1 : 0);
        break;
      case ArgType::kInt:
      case ArgType::kUInt:
        row_.Int(4, item.value.int_value);
        break;
      case ArgType::kDouble:
        row_.Real(6, item.value.double_value);
        break;
      case ArgType::kString:
      case ArgType::kJson:
        row_.Text(5, trace_.str(item.value.str));
        break;
      case ArgType::kNull:
        break;
    }
    row_.Text(7, ValueType(item.value.type));
    row_.Insert();
  }
  return set;
}

}  // namespace profsh::sqlite
