// Where `profsh job map` puts each summary: every task writes a staging file of its own in DIR
// (its rank is known only once summarized); a finished one is renamed rank-R.summary.sqlite, as
// `profsh summarize TRACE... -o DIR` names them, R read from the summary itself. A trace holding
// several ranks leaves a staging folder of rank-R.summary.sqlite files: each is placed so.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/util/result.h"
#include "repl/job_map_plan.h"

namespace profsh::repl {

class SummaryOutputs {
 public:
  explicit SummaryOutputs(const std::vector<MapTask>& tasks) : tasks_(tasks) {}

  // Names task `index`'s finished summaries by their ranks; returns their final paths. Fails (its
  // staging file or folder removed, none of its ranks placed) when a summary cannot be read or
  // another trace had one of its ranks.
  Result<std::vector<std::string>> Place(size_t index);
  // Removes the staging files and folders left by tasks that did not finish.
  void RemoveStaging() const;

 private:
  const std::vector<MapTask>& tasks_;
  std::map<int32_t, size_t> task_of_rank_;
};

// The rank a summary file says it is (its rank table).
Result<int32_t> SummaryFileRank(const std::string& path);

}  // namespace profsh::repl
