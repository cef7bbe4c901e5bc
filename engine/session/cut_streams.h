// The processes whose stream has no end (the process was killed before the collector closed it,
// or was still running when it was read), named in the warning with why, where that is known.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace profsh {

struct CutStream {
  int64_t pid = 0;
  std::string command;  // the command line, or the executable
};

// How the processes profsh watched ended, by pid ("killed by SIGINT", "still running when
// profsh stopped waiting"). `just_recorded`: the session is read right after its run, so a
// process not in `known` that is gone was killed by a signal (an exit, _exit or exec closes the
// stream), and one in /proc is still running.
struct ProcessEndings {
  std::map<int64_t, std::string> known;
  bool just_recorded = false;
};

// "1 process did not finish its stream: 4242 (python3 train.py) killed by SIGINT; events up to
// its last drain are kept". Names the first few processes; empty when `cut` is.
std::string CutStreamsWarning(const std::vector<CutStream>& cut, const ProcessEndings& endings);

}  // namespace profsh
