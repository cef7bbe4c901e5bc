// The reduce after `profsh job map`, where profsh runs: profsh.load_summaries over the summaries
// this map wrote (not others an earlier map left in the folder; ranks missing from 0..max are
// said, not refused) and the job's headline on standard output: the straggler, the slowest rank
// per step, the drifting ranks (each "not known" with the reason when the summaries cannot
// tell, as for a trace without ProfilerStep#N ranges).
#pragma once

#include <string>
#include <vector>

namespace profsh::repl {

// Exit status: 0, or 1 when the summaries could not be reduced (the message on standard error).
int ReduceSummaries(const std::vector<std::string>& summaries, const std::string& folder);

}  // namespace profsh::repl
