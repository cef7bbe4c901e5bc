#include "engine/analysis/arg_reader.h"

#include <cstring>

namespace profsh {

ArgReader::ArgReader(const Trace& trace, std::initializer_list<std::string_view> keys)
    : trace_(trace), key_count_(keys.size()) {
  std::vector<std::optional<uint32_t>> key_ids;
  for (std::string_view k : keys) key_ids.push_back(trace.strings.Find(k));
  const ArgStore& args = trace.args;
  slots_.resize(static_cast<size_t>(args.schema_count()) * key_count_);
  for (uint32_t schema = 0; schema < args.schema_count(); ++schema) {
    int32_t word = 0;
    for (size_t f = 0; f < args.field_count(schema); ++f) {
      SchemaField field = args.field(schema, f);
      for (size_t k = 0; k < key_count_; ++k) {
        Slot& slot = slots_[schema * key_count_ + k];
        if (slot.field < 0 && !field.top_level && key_ids[k] && *key_ids[k] == field.key) {
          slot.field = static_cast<int32_t>(f);
          slot.inline_word = word;
          // The width stored with the schema: an inline value's type alone does not say it.
          slot.inline_words = field.inline_value ? field.inline_words : 0;
          slot.type = field.value.type;
        }
      }
      if (field.inline_value) word += static_cast<int32_t>(field.inline_words);
    }
  }
}

}  // namespace profsh
