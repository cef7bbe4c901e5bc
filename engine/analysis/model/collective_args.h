// The arguments torch writes on a collective's record_param_comms (and Kineto on NCCL's
// kernels): its process group, the collective's name and its sequence number in the group.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "engine/analysis/arg_reader.h"
#include "engine/trace/trace.h"

namespace profsh {

class CollectiveArgs {
 public:
  explicit CollectiveArgs(const Trace& trace);
  // The "Process Group Name" and "Collective name" strings; none when absent or not strings.
  std::optional<std::string_view> Group(size_t event) const { return Text(event, kGroup); }
  std::optional<std::string_view> Name(size_t event) const { return Text(event, kName); }
  // The "Seq" number; none when absent or not a number.
  std::optional<int64_t> Seq(size_t event) const;
  // The message's size in bytes: "In msg nelems" (or "Out msg nelems") times the size of its
  // "dtype"; none when either is absent or the dtype is not one of torch's ScalarTypes.
  std::optional<int64_t> InBytes(size_t event) const { return Bytes(event, kInNelems); }
  std::optional<int64_t> OutBytes(size_t event) const { return Bytes(event, kOutNelems); }

 private:
  enum Key : size_t { kGroup, kName, kSeq, kInNelems, kOutNelems, kDtype };
  std::optional<std::string_view> Text(size_t event, Key key) const;
  std::optional<int64_t> Bytes(size_t event, Key nelems) const;
  const Trace& trace_;
  ArgReader reader_;
};

}  // namespace profsh
