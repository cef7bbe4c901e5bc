#include "engine/exporters/sqlite_arg_sets.h"

#include <cstring>

#include "engine/exporters/json_leaves.h"

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
      key_(db, "INSERT INTO __intrinsic_arg_key (id, key, flat_key) VALUES (?, ?, ?)") {}

Status ArgSetWriter::status() const {
  if (Status s = key_.status(); !s.ok()) return s;
  return row_.status();
}

int64_t ArgSetWriter::KeyId(const std::string& key, const std::string& flat_key) {
  auto [it, inserted] = key_of_text_.try_emplace(key, static_cast<int64_t>(key_of_text_.size()));
  if (inserted) {
    key_.Int(1, it->second);
    key_.Text(2, key);
    key_.Text(3, flat_key);
    key_.Insert();
  }
  return it->second;
}

int64_t ArgSetWriter::KeyId(uint32_t key) {
  auto known = key_of_string_id_.find(key);
  if (known != key_of_string_id_.end()) return known->second;
  const std::string text = "args." + std::string(trace_.str(key));
  const int64_t id = KeyId(text, text);
  key_of_string_id_.emplace(key, id);
  return id;
}

void ArgSetWriter::CollectRows(const ArgStore::View& view) {
  rows_.clear();
  texts_.clear();
  for (const ArgStore::View::Item item : view) {
    if (item.top_level || item.value.type == ArgType::kNull) continue;
    if (item.value.type != ArgType::kJson) {
      rows_.push_back(Row{KeyId(item.key), item.value, false, 0});
      continue;
    }
    const std::string key = "args." + std::string(trace_.str(item.key));
    const size_t first = rows_.size();
    const bool parsed = ForEachJsonLeaf(trace_.str(item.value.str), key, [&](const JsonLeaf& leaf) {
      size_t text = 0;
      if (leaf.value.type == ArgType::kString) {
        text = texts_.size();
        texts_.push_back(leaf.text);
      }
      rows_.push_back(Row{KeyId(leaf.key, leaf.flat_key), leaf.value,
                          leaf.value.type == ArgType::kString, text});
    });
    // Text the walker cannot read stays one row with the JSON text.
    if (!parsed) {
      rows_.resize(first);
      rows_.push_back(Row{KeyId(item.key), item.value, false, 0});
    }
  }
}

int64_t ArgSetWriter::Add(ArgRef ref) {
  if (ref.empty()) return kNone;
  const ArgStore::View view(&trace_.args, ref);
  // The set's content as bytes (key, type, value; strings and JSON by their pool id), so that
  // equal sets are found by one hash lookup. Perfetto skips null values.
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
  auto [it, inserted] = set_of_content_.try_emplace(content_, kNone);
  if (!inserted) return it->second;
  CollectRows(view);
  // Only empty arrays, objects or nulls: no arguments, as in Perfetto.
  if (rows_.empty()) return kNone;
  const int64_t set = next_row_;
  it->second = set;
  for (const Row& r : rows_) {
    row_.Int(1, next_row_++);
    row_.Int(2, set);
    row_.Int(3, r.key_id);
    row_.Null(4);
    row_.Null(5);
    row_.Null(6);
    switch (r.value.type) {
      case ArgType::kBool:
        row_.Int(4, r.value.bool_value ? 1 : 0);
        break;
      case ArgType::kInt:
      case ArgType::kUInt:
        row_.Int(4, r.value.int_value);
        break;
      case ArgType::kDouble:
        row_.Real(6, r.value.double_value);
        break;
      case ArgType::kString:
        // A leaf of a JSON value has its own text; an argument's is in the trace's pool.
        row_.Text(5, r.leaf_text ? std::string_view(texts_[r.text]) : trace_.str(r.value.str));
        break;
      case ArgType::kJson:
        row_.Text(5, trace_.str(r.value.str));
        break;
      case ArgType::kNull:
        break;
    }
    row_.Text(7, ValueType(r.value.type));
    row_.Insert();
  }
  return set;
}

}  // namespace profsh::sqlite
