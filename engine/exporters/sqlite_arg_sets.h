// Arguments as Perfetto's args table holds them: one arg set per distinct set of (key, value)
// pairs, shared by every slice that has the same arguments, and numbered as Perfetto numbers it
// (an arg set's id is the id of its first args row).
#pragma once

#include <string>
#include <unordered_map>

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
  // A key's row in __intrinsic_arg_key: each key's text is stored once, not once per argument.
  int64_t KeyId(uint32_t key);

  const Trace& trace_;
  Inserter row_;
  Inserter key_;
  std::unordered_map<std::string, int64_t> set_of_content_;
  std::unordered_map<uint32_t, int64_t> key_ids_;
  std::string content_;  // reused: the canonical bytes of one set
  int64_t next_row_ = 0;
};

}  // namespace profsh::sqlite
