#include "engine/analysis/model/python_function_args.h"

#include "engine/trace/kineto_schema.h"

namespace profsh {

PythonFunctionArgs::PythonFunctionArgs(const Trace& trace)
    : trace_(trace),
      reader_(trace, {kineto::kPythonId, kineto::kPythonParentId, kineto::kPythonModuleId}) {}

std::optional<int64_t> PythonFunctionArgs::Number(size_t event, Key key) const {
  ArgValue v;
  if (!reader_.Get(trace_.events.args(event), key, &v) || !v.is_number()) return std::nullopt;
  return v.AsInt();
}

}  // namespace profsh
