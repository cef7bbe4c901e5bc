// /proc/PID/maps parsing, mapping replacement and lookup (engine/symbols/address_space.h).
#include <gtest/gtest.h>

#include "engine/symbols/address_space.h"

namespace profsh::symbols {
namespace {

constexpr char kMaps[] =
    "55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1234                       /usr/bin/prog\n"
    "55d0c0a02000-55d0c0a05000 r-xp 00002000 08:01 1234                       /usr/bin/prog\n"
    "7f00aa000000-7f00aa100000 rw-p 00000000 00:00 0 \n"
    "7f00ab000000-7f00ab020000 r-xp 00010000 fd:00 99 /opt/my libs/libx.so (deleted)\n"
    "7ffd1000-7ffd2000 rw-p 00000000 00:00 0                          [stack]\n";

TEST(AddressSpace, ParsesProcMaps) {
  auto space = AddressSpace::FromProcMaps(kMaps, "maps");
  ASSERT_TRUE(space.ok()) << space.error().message;
  const auto& m = space->mappings();
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0].start, 0x7ffd1000u);  // sorted by address
  EXPECT_EQ(m[0].path, "[stack]");
  EXPECT_EQ(m[2].start, 0x55d0c0a02000u);
  EXPECT_EQ(m[2].end, 0x55d0c0a05000u);
  EXPECT_EQ(m[2].file_offset, 0x2000u);
  EXPECT_TRUE(m[2].executable);
  EXPECT_FALSE(m[1].executable);
  EXPECT_EQ(m[2].path, "/usr/bin/prog");
  EXPECT_EQ(m[3].path, "");
  EXPECT_EQ(m[4].path, "/opt/my libs/libx.so (deleted)");
  EXPECT_FALSE(IsFilePath(m[4].path));
  EXPECT_TRUE(IsFilePath(m[2].path));
  EXPECT_FALSE(IsFilePath("//anon"));  // perf's name for anonymous memory
  EXPECT_FALSE(IsFilePath("[vdso]"));
  EXPECT_FALSE(IsFilePath(""));
}

TEST(AddressSpace, FindsTheMappingHoldingAnAddress) {
  auto space = AddressSpace::FromProcMaps(kMaps, "maps");
  ASSERT_TRUE(space.ok());
  ASSERT_NE(space->Find(0x55d0c0a02000), nullptr);
  EXPECT_EQ(space->Find(0x55d0c0a02000)->file_offset, 0x2000u);
  EXPECT_EQ(space->Find(0x55d0c0a04fff)->path, "/usr/bin/prog");
  EXPECT_EQ(space->Find(0x55d0c0a05000), nullptr);  // one past the end
  EXPECT_EQ(space->Find(0x10), nullptr);
  EXPECT_EQ(space->Find(0xffffffffffffffff), nullptr);
}

TEST(AddressSpace, ErrorsNameTheOriginAndLine) {
  struct Case {
    const char* text;
    const char* expected;
  } cases[] = {
      {"zz-10 r-xp 0 08:01 1 /a\n", "pid 42 maps:1: address range is not START-END in hex"},
      {"10-20 r-xp 0 08:01 1 /a\n20-10 r-xp 0 08:01 1 /b\n",
       "pid 42 maps:2: address range ends before it starts"},
      {"10-20 rx 0 08:01 1 /a\n", "pid 42 maps:1: permissions are not 4 characters"},
      {"\n10-20 r-xp 0x 08:01 1 /a\n", "pid 42 maps:2: file offset is not hex"},
      {"10-20 r-xp 0 0801 1 /a\n", "pid 42 maps:1: device is not MAJOR:MINOR"},
      {"10-20 r-xp 0 08:01 x1 /a\n", "pid 42 maps:1: inode is not a number"},
      {"10-20 r-xp\n", "pid 42 maps:1: file offset is not hex"},
  };
  for (const Case& c : cases) {
    auto space = AddressSpace::FromProcMaps(c.text, "pid 42 maps");
    ASSERT_FALSE(space.ok()) << c.text;
    EXPECT_NE(space.error().message.find(c.expected), std::string::npos) << space.error().message;
  }
}

TEST(AddressSpace, EmptyTextIsAnEmptySpace) {
  auto space = AddressSpace::FromProcMaps("", "maps");
  ASSERT_TRUE(space.ok());
  EXPECT_TRUE(space->mappings().empty());
}

TEST(AddressSpace, ALaterMappingReplacesWhatItOverlaps) {
  AddressSpace space;
  space.Add({0x1000, 0x5000, 0x0, "/lib/a.so", "", true});
  space.Add({0x6000, 0x7000, 0x0, "/lib/c.so", "", true});
  // Inside a.so: splits it in two; the tail's file offset moves with it.
  space.Add({0x2000, 0x3000, 0x0, "/lib/b.so", "", true});
  ASSERT_EQ(space.mappings().size(), 4u);
  EXPECT_EQ(space.Find(0x1fff)->path, "/lib/a.so");
  EXPECT_EQ(space.Find(0x2000)->path, "/lib/b.so");
  EXPECT_EQ(space.Find(0x3000)->path, "/lib/a.so");
  EXPECT_EQ(space.Find(0x3000)->file_offset, 0x2000u);
  EXPECT_EQ(space.Find(0x3000)->start, 0x3000u);
  // Over the end of one and the start of the next, and past a whole one.
  space.Add({0x4000, 0x6800, 0x100000, "/lib/d.so", "", false});
  EXPECT_EQ(space.Find(0x3fff)->path, "/lib/a.so");
  EXPECT_EQ(space.Find(0x4000)->path, "/lib/d.so");
  EXPECT_EQ(space.Find(0x67ff)->path, "/lib/d.so");
  EXPECT_EQ(space.Find(0x6800)->path, "/lib/c.so");
  EXPECT_EQ(space.Find(0x6800)->file_offset, 0x800u);
  // Exactly the same range: replaced.
  space.Add({0x2000, 0x3000, 0x0, "/lib/e.so", "", true});
  EXPECT_EQ(space.Find(0x2500)->path, "/lib/e.so");
  const auto& m = space.mappings();
  for (size_t i = 1; i < m.size(); ++i) EXPECT_LE(m[i - 1].end, m[i].start);
  EXPECT_EQ(m.size(), 5u);
  space.Add({0x9000, 0x9000, 0, "/empty", "", true});  // empty ranges are ignored
  EXPECT_EQ(space.mappings().size(), 5u);
}

}  // namespace
}  // namespace profsh::symbols
