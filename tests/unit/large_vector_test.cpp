#include "engine/util/large_vector.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace profsh {
namespace {

size_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  size_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * 4096;
}

TEST(LargeVector, FreedBlocksAreReusedAndTrimmed) {
  TrimLargeBlockCache();
  const void* first;
  {
    LargeVector<int64_t> v(size_t{8} << 20, 1);
    first = v.data();
  }
  LargeVector<int64_t> again(size_t{8} << 20, 2);
  EXPECT_EQ(again.data(), first);  // the same block, its pages already there
  EXPECT_EQ(again[12345], 2);
  LargeVector<int64_t>().swap(again);
  EXPECT_GE(TrimLargeBlockCache(), size_t{64} << 20);
  EXPECT_EQ(TrimLargeBlockCache(), 0u);
}

TEST(LargeVector, HeldBytesCountWhatTheProcessHolds) {
  // A small column is heap memory: its whole capacity counts until it is shrunk.
  LargeVector<uint64_t> small;
  small.reserve(100000);  // 800 KB
  for (uint64_t i = 0; i < 1000; ++i) small.push_back(i);
  EXPECT_EQ(HeldBytes(small), small.capacity() * sizeof(uint64_t));
  ReleaseUnusedCapacity(small);
  EXPECT_EQ(small.capacity(), small.size());
  EXPECT_EQ(HeldBytes(small), 1000 * sizeof(uint64_t));
  for (uint64_t i = 0; i < 1000; i += 97) ASSERT_EQ(small[i], i);
  // A large one counts its used part in whole 2 MiB huge pages, at most its capacity.
  LargeVector<uint8_t> large;
  large.reserve(size_t{64} << 20);
  large.resize((size_t{5} << 20) + 1);
  EXPECT_EQ(HeldBytes(large), size_t{6} << 20);
  large.resize(size_t{64} << 20);
  EXPECT_EQ(HeldBytes(large), size_t{64} << 20);
}

TEST(LargeVector, UnusedCapacityGoesBackButDataStays) {
  LargeVector<uint32_t> v;
  v.reserve(size_t{64} << 20);  // 256 MiB reserved
  for (uint32_t i = 0; i < (1u << 20); ++i) v.push_back(i * 3);
  for (size_t i = v.size(); i < v.capacity(); i += 1024) v.data()[i] = 7;  // touch the tail
  size_t before = ResidentBytes();
  ReleaseUnusedCapacity(v);
  EXPECT_LT(ResidentBytes() + (size_t{200} << 20), before);
  for (uint32_t i = 0; i < (1u << 20); i += 4099) ASSERT_EQ(v[i], i * 3);
  v.push_back(1);  // the capacity is still usable
  EXPECT_EQ(v.back(), 1u);
}

}  // namespace
}  // namespace profsh
