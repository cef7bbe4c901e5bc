// The cuda activity's pieces that need no workload: GPU records through the stream codec, and
// Kineto's occupancy estimate against kernels of a real Kineto trace (an A100's, from
// critical_path_simple_add_benchmark in the shared traces).
#include <gtest/gtest.h>

#include <string_view>

#include "engine/session/gpu_emitter.h"
#include "engine/stream/stream_codec.h"
#include "test_util.h"

namespace profsh {
namespace {

namespace st = stream;

TEST(GpuActivity, RecordsReadBackAsWritten) {
  testing::CodecSink out;
  st::GpuBlockWriter<testing::CodecSink> writer(out);
  writer.Begin();
  st::GpuRecord kernel;
  kernel.kind = st::kGpuKernel;
  kernel.count = 18;
  for (uint32_t i = 0; i < kernel.count; ++i) kernel.f[i] = (uint64_t{1} << (3 * i)) + i;
  st::GpuRecord drops;
  drops.kind = st::kGpuDrops;
  drops.count = 3;
  drops.f[0] = 7;
  writer.Add(kernel);
  writer.Add(drops);
  EXPECT_EQ(writer.End(), 2u);
  st::BlockIterator blocks(out.view(), 0);
  st::RawBlock raw;
  ASSERT_TRUE(blocks.Next(&raw));
  EXPECT_EQ(raw.type, st::kGpuActivity);
  st::Cursor c(raw.payload);
  EXPECT_EQ(c.Fixed<uint32_t>(), 2u);
  st::GpuRecord r;
  ASSERT_TRUE(st::DecodeGpuRecord(c, &r));
  EXPECT_EQ(r.kind, st::kGpuKernel);
  ASSERT_EQ(r.count, 18u);
  for (uint32_t i = 0; i < r.count; ++i) EXPECT_EQ(r[i], kernel.f[i]);
  EXPECT_EQ(r[18], 0u);  // a field the writer did not send reads as 0
  ASSERT_TRUE(st::DecodeGpuRecord(c, &r));
  EXPECT_EQ(r.kind, st::kGpuDrops);
  EXPECT_EQ(r[0], 7u);
  EXPECT_TRUE(c.AtEnd());
  // Cut anywhere inside, a record is refused without reading past the block.
  for (size_t cut = 5; cut < raw.payload.size(); ++cut) {
    st::Cursor cc(raw.payload.substr(0, cut));
    cc.Fixed<uint32_t>();
    st::GpuRecord x;
    const bool first = st::DecodeGpuRecord(cc, &x);
    const bool second = first && st::DecodeGpuRecord(cc, &x);
    EXPECT_FALSE(first && second) << cut;
  }
}

// A sink that has room for `limit` bytes only, as the collector's buffer out of memory.
struct FullSink {
  testing::CodecSink inner;
  size_t limit;
  uint8_t* Room(size_t n) { return inner.used + n > limit ? nullptr : inner.Room(n); }
  void Advance(size_t n) { inner.Advance(n); }
  size_t size() const { return inner.size(); }
  uint8_t* At(size_t offset) { return inner.At(offset); }
};

TEST(GpuActivity, RecordWithoutRoomIsReportedNotWritten) {
  FullSink out{{}, 12 + st::kMaxGpuRecordBytes};  // the block header, its count, one record
  st::GpuBlockWriter<FullSink> writer(out);
  writer.Begin();
  st::GpuRecord r;
  r.kind = st::kGpuKernel;
  r.count = 2;
  r.f[0] = 5;
  r.f[1] = 9;
  EXPECT_TRUE(writer.Add(r));
  EXPECT_FALSE(writer.Add(r));  // the caller counts it as lost
  EXPECT_EQ(writer.End(), 1u);
}

st::GpuRecord A100() {
  st::GpuRecord d;
  d.kind = st::kGpuDevice;
  d.count = 11;
  // id, name, SMs, cc, memory, max warps per SM, max blocks per SM, registers per SM, shared
  // memory per SM, max threads per block
  const uint64_t f[] = {0, 0, 108, 8, 0, 42297524224, 64, 32, 65536, 167936, 1024};
  for (int i = 0; i < 11; ++i) d.f[i] = f[i];
  return d;
}

st::GpuRecord Kernel(uint64_t grid, uint64_t block, uint64_t registers, uint64_t shared) {
  st::GpuRecord k;
  k.kind = st::kGpuKernel;
  k.count = 18;
  k.f[7] = grid;
  k.f[8] = k.f[9] = 1;
  k.f[10] = block;
  k.f[11] = k.f[12] = 1;
  k.f[13] = registers;
  k.f[14] = shared;
  return k;
}

// The "est. achieved occupancy %" Kineto wrote for these kernels on that A100.
TEST(GpuActivity, OccupancyAsKinetoEstimatesIt) {
  const st::GpuRecord a100 = A100();
  EXPECT_EQ(EstimatedOccupancy(Kernel(864, 256, 47, 0), a100), 63);
  EXPECT_EQ(EstimatedOccupancy(Kernel(12, 256, 16, 0), a100), 1);
  EXPECT_EQ(EstimatedOccupancy(Kernel(3025, 128, 160, 16384), a100), 19);
  EXPECT_EQ(EstimatedOccupancy(Kernel(96800, 128, 40, 0), a100), 75);
  EXPECT_EQ(EstimatedOccupancy(Kernel(48400, 128, 18, 0), a100), 100);
  EXPECT_EQ(EstimatedOccupancy(Kernel(23328, 256, 26, 0), a100), 100);
  EXPECT_EQ(EstimatedOccupancy(Kernel(1, 0, 32, 0), a100), 0);  // no threads: nothing resident
}

}  // namespace
}  // namespace profsh
