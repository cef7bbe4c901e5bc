// What `profsh --version` prints: the version, the commit and what this build contains (the
// libraries linked in, the CUDA headers the collector was built with, the glibc it needs) and
// where the pieces it finds at run time are (the collector, the PyTorch operator source).
#pragma once

#include <string>

namespace profsh::repl {

std::string BuildDescription();

}  // namespace profsh::repl
