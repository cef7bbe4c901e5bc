#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "engine/exporters/exporter.h"
#include "engine/load/trace_loader.h"
#include "engine/io/atomic_writer.h"
#include "engine/trace/trace_builder.h"
#include "tests/unit/test_util.h"

namespace profsh {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const char kTrace[] = R"({"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 3, "tid": 4, "ts": 100.5, "dur": 7,
   "args": {"External id": 1, "Input Dims": [[4, 4], [4, 4]], "Addr": 140737488355328}},
  {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 3, "tid": 4, "ts": 101,
   "args": {"Bytes": -64, "Device Type": 0}},
  {"name": "thread_name", "ph": "M", "pid": 3, "tid": 4, "args": {"name": "worker"}},
  {"ph": "C", "name": "mem", "pid": 3, "tid": 4, "ts": 102, "args": {"allocated": 1.5e9}}],
  "baseTimeNanoseconds": 5000})";

std::string ChromeText(const Trace& t) {
  std::string path = testing::TempPath("fmt.json");
  EXPECT_TRUE(ExportTrace(t, "chrome", path).ok());
  std::string text = Slurp(path);
  std::remove(path.c_str());
  return text;
}

TEST(ProfshFormat, RoundTripsEverything) {
  auto t = testing::MustImport(kTrace);
  std::string path = testing::TempPath("rt.profsh");
  ASSERT_TRUE(ExportTrace(*t, "profsh", path).ok());
  auto back = LoadTrace(path);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back.value()->source_format, "kineto-json");
  EXPECT_EQ(back.value()->origin_ns, 5000);
  EXPECT_EQ(ChromeText(*back.value()), ChromeText(*t));
  EXPECT_EQ(back.value()->events.ts(0), t->events.ts(0));
  std::remove(path.c_str());
}

TEST(ProfshFormat, IsDetectedFromContentNotName) {
  auto t = testing::MustImport(kTrace);
  std::string path = testing::TempPath("looks_like.json");
  ASSERT_TRUE(ExportTrace(*t, "profsh", path).ok());
  auto back = LoadTrace(path);
  ASSERT_TRUE(back.ok()) << back.error().message;
  std::remove(path.c_str());
}

TEST(ProfshFormat, GzippedFileLoads) {
  auto t = testing::MustImport(kTrace);
  std::string path = testing::TempPath("rt.profsh.gz");
  ASSERT_TRUE(ExportTrace(*t, "profsh", path).ok());
  auto back = LoadTrace(path);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back.value()->events.size(), t->events.size());
  std::remove(path.c_str());
}

class ProfshFormatDamage : public ::testing::Test {
 protected:
  void SetUp() override {
    auto t = testing::MustImport(kTrace);
    path_ = testing::TempPath("damage.profsh");
    ASSERT_TRUE(ExportTrace(*t, "profsh", path_).ok());
    bytes_ = Slurp(path_);
  }
  void TearDown() override { std::remove(path_.c_str()); }
  std::string LoadError(const std::string& bytes) {
    EXPECT_TRUE(WriteFileAtomically(path_, bytes).ok());
    auto r = LoadTrace(path_);
    return r.ok() ? std::string("<loaded>") : r.error().message;
  }
  std::string path_;
  std::string bytes_;
};

TEST_F(ProfshFormatDamage, WrongVersionIsNamed) {
  std::string b = bytes_;
  uint32_t v = 99;
  std::memcpy(&b[8], &v, 4);
  std::string e = LoadError(b);
  EXPECT_NE(e.find("version 99 is not supported"), std::string::npos) << e;
  EXPECT_NE(e.find(path_), std::string::npos);
}

TEST_F(ProfshFormatDamage, AnInlineStringIsRejected) {
  // No writer keeps strings inline; a file that does would hand an unchecked string id out.
  Trace t;
  TraceBuilder b(t);
  b.BeginArgs();
  ArgValue v;
  v.type = ArgType::kString;
  b.AddArg("name", false, v, "", true);
  uint32_t schema = b.BuildSchema();
  EventFields e;
  e.name = "x";
  uint32_t words[] = {123456789};
  b.AddEvent(e, schema, words);
  ASSERT_TRUE(b.Finish().ok());
  ASSERT_TRUE(ExportTrace(t, "profsh", path_).ok());
  auto r = LoadTrace(path_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("inline value must be a number"), std::string::npos)
      << r.error().message;
}

TEST_F(ProfshFormatDamage, ALongDurationOutOfRangeIsRejected) {
  auto t = testing::MustImport(R"({"traceEvents": [
    {"ph": "X", "name": "step", "pid": 1, "tid": 1, "ts": 0, "dur": 12000000}]})");
  ASSERT_TRUE(ExportTrace(*t, "profsh", path_).ok());
  std::string b = Slurp(path_);
  size_t at = b.find("LDUR");
  ASSERT_NE(at, std::string::npos);
  int64_t ns = 5;  // below the 32-bit column's range: must have been stored there
  std::memcpy(&b[at + 16 + 8 + 8], &ns, 8);
  std::string e = LoadError(b);
  EXPECT_NE(e.find("section LDUR: entry 0 has a duration out of range"), std::string::npos) << e;
}

TEST_F(ProfshFormatDamage, EveryTruncationIsAnError) {
  for (size_t len = 8; len < bytes_.size(); len += std::max<size_t>(1, bytes_.size() / 97)) {
    std::string e = LoadError(bytes_.substr(0, len));
    EXPECT_NE(e, "<loaded>") << "truncated at " << len;
    EXPECT_NE(e.find("profsh trace"), std::string::npos) << e;
  }
}

TEST_F(ProfshFormatDamage, CorruptIdsAreRejectedNotFollowed) {
  // Flip bytes all over the file; whatever happens must be a clean error or a valid load.
  for (size_t pos = 32; pos < bytes_.size(); pos += 13) {
    std::string b = bytes_;
    b[pos] = static_cast<char>(b[pos] ^ 0x5a);
    std::string e = LoadError(b);
    (void)e;  // under ASan any out-of-bounds read would abort the test here
  }
}

}  // namespace
}  // namespace profsh
