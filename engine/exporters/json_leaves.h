// The leaves of a JSON argument as Perfetto's JSON importer stores them: an object's members
// under KEY.MEMBER, an array's elements under KEY[i] (flat_key KEY: the key without the array
// indices), nulls and empty arrays and objects left out (an array index counts the elements
// kept).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "engine/trace/args.h"

namespace profsh::sqlite {

struct JsonLeaf {
  const std::string& key;
  const std::string& flat_key;
  ArgValue value;           // kInt, kUInt, kDouble or kBool; kString with `text`
  const std::string& text;  // a string leaf's decoded text
};

// Calls `leaf` for each leaf of `json` under `key`, in document order. False (after the leaves
// found so far) when the text is not JSON.
bool ForEachJsonLeaf(std::string_view json, const std::string& key,
                     const std::function<void(const JsonLeaf&)>& leaf);

}  // namespace profsh::sqlite
