#include "tests/unit/test_util.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "engine/exporters/exporter.h"

namespace profsh::testing {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/profsh_test_" + std::to_string(getpid()) + "_" + name;
}

std::string ExportText(const Trace& t) {
  std::string path = TempPath("export.json");
  Status s = ExportTrace(t, "chrome", path);
  EXPECT_TRUE(s.ok()) << s.message();
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path.c_str());
  return text.str();
}

}  // namespace profsh::testing
