// Arguments as Perfetto's args table holds them: one arg set per distinct set of (key, value)
// pairs, shared by every slice that has the same arguments, and numbered as Perfetto numbers it
// (an arg set's id is the id of its first args row). JSON arrays and objects are flattened into
// their leaves as Perfetto's JSON importer does (json_leaves.h).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "engine/exporters/perfetto_layout.h"
#include "engine/exporters/sqlite_handle.h"

namespace profsh::sqlite {

class ArgSetWriter {
 public:
  ArgSetWriter(const Trace& trace, const Database& db);
  // The arg set of an event's "args" members (event-level fields are not arguments in
  // Perfetto); kNone when it has none.
  int64_t Add(ArgRef ref);
  Status status() const;

 private:
  struct Row {
    int64_t key_id;
    ArgValue value;
    bool leaf_text;  // a JSON leaf's string: texts_[text], else the trace's string value.str
    size_t text;
  };
  // A key's row in __intrinsic_arg_key (with its flat_key): each key's text is stored once, not
  // once per argument.
  int64_t KeyId(const std::string& key, const std::string& flat_key);
  int64_t KeyId(uint32_t key);
  void CollectRows(const ArgStore::View& view);

  const Trace& trace_;
  Inserter row_;
  Inserter key_;
  std::unordered_map<std::string, int64_t> set_of_content_;
  std::unordered_map<uint32_t, int64_t> key_of_string_id_;
  std::unordered_map<std::string, int64_t> key_of_text_;
  std::string content_;  // reused: the canonical bytes of one set
  std::vector<Row> rows_;
  std::vector<std::string> texts_;
  int64_t next_row_ = 0;
};

}  // namespace profsh::sqlite
