// The arguments torch writes on a python_function range (with_stack): its id, its caller's id
// and, for an nn.Module's forward, the module's id.
#pragma once

#include <cstdint>
#include <optional>

#include "engine/analysis/arg_reader.h"
#include "engine/trace/trace.h"

namespace profsh {

class PythonFunctionArgs {
 public:
  explicit PythonFunctionArgs(const Trace& trace);
  // "Python id", "Python parent id", "Python module id"; none when absent or not numbers.
  std::optional<int64_t> Id(size_t event) const { return Number(event, kId); }
  std::optional<int64_t> ParentId(size_t event) const { return Number(event, kParent); }
  std::optional<int64_t> ModuleId(size_t event) const { return Number(event, kModule); }

 private:
  enum Key : size_t { kId, kParent, kModule };
  std::optional<int64_t> Number(size_t event, Key key) const;
  const Trace& trace_;
  ArgReader reader_;
};

}  // namespace profsh
