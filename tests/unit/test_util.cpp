#include "tests/unit/test_util.h"

#include <unistd.h>

namespace profsh::testing {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/profsh_test_" + std::to_string(getpid()) + "_" + name;
}

}  // namespace profsh::testing
