#include "engine/analysis/model/collective_args.h"

#include "engine/trace/kineto_schema.h"

namespace profsh {

CollectiveArgs::CollectiveArgs(const Trace& trace)
    : trace_(trace),
      reader_(trace, {kineto::kProcessGroupName, kineto::kCollectiveName, kineto::kSeq}) {}

std::optional<std::string_view> CollectiveArgs::Text(size_t event, Key key) const {
  ArgValue v;
  if (!reader_.Get(trace_.events.args(event), key, &v) || v.type != ArgType::kString)
    return std::nullopt;
  return trace_.str(v.str);
}

std::optional<int64_t> CollectiveArgs::Seq(size_t event) const {
  ArgValue v;
  if (!reader_.Get(trace_.events.args(event), kSeq, &v) || !v.is_number()) return std::nullopt;
  return v.AsInt();
}

}  // namespace profsh
