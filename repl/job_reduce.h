// The reduce after `profsh job map`, where profsh runs: profsh.load_summaries over the summaries
// just written (the missing ranks allowed when some failed) and the job's headline on standard
// output: the straggler, the slowest rank per step, the drifting ranks.
#pragma once

#include <string>

namespace profsh::repl {

// Exit status: 0, or 1 when the summaries could not be reduced (the message on standard error).
int ReduceSummaries(const std::string& folder, bool ranks_failed);

}  // namespace profsh::repl
