// The cuda activity's pieces that need no workload: GPU records through the stream codec, and
// Kineto's occupancy estimate against kernels of a real Kineto trace (an A100's, from
// critical_path_simple_add_benchmark in the shared traces).
#include <gtest/gtest.h>

#include <string_view>

#include "engine/decoding/gpu_emitter.h"
#include "engine/stream/gpu_records.h"
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

// Every kind's named fields go out in the declared order and come back by name.
TEST(GpuActivity, NamedRecordsRoundTripThroughTheCodec) {
  testing::CodecSink out;
  st::GpuBlockWriter<testing::CodecSink> writer(out);
  writer.Begin();
  st::GpuRecord r;
  st::GpuKernel{
      .start = 10, .end = 20, .device = 1, .stream = 7, .correlation = 42, .graph_node = 9}
      .PackInto(&r);
  writer.Add(r);
  st::GpuApi{.start = 5, .end = 8, .tid = 77, .correlation = 42, .return_value = 3}.PackInto(&r);
  writer.Add(r);
  st::GpuMemory{.time = 30, .correlation = 43, .bytes = 4096}.PackInto(&r);
  writer.Add(r);
  EXPECT_EQ(writer.End(), 3u);
  st::BlockIterator blocks(out.view(), 0);
  st::RawBlock raw;
  ASSERT_TRUE(blocks.Next(&raw));
  st::Cursor c(raw.payload);
  ASSERT_EQ(c.Fixed<uint32_t>(), 3u);
  ASSERT_TRUE(st::DecodeGpuRecord(c, &r));
  ASSERT_EQ(r.kind, st::kGpuKernel);
  EXPECT_EQ(r.count, st::GpuKernel::kFields);
  const st::GpuKernel k = st::GpuKernel::From(r);
  EXPECT_EQ(k.start, 10u);
  EXPECT_EQ(k.stream, 7u);
  EXPECT_EQ(k.correlation, 42u);
  EXPECT_EQ(k.graph_node, 9u);
  EXPECT_EQ(st::CorrelationOf(r), 42u);
  EXPECT_TRUE(st::IsDeviceWork(r.kind));
  ASSERT_TRUE(st::DecodeGpuRecord(c, &r));
  const st::GpuApi call = st::GpuApi::From(r);
  EXPECT_EQ(call.tid, 77u);
  EXPECT_EQ(call.return_value, 3u);
  EXPECT_FALSE(st::IsDeviceWork(r.kind));
  ASSERT_TRUE(st::DecodeGpuRecord(c, &r));
  EXPECT_EQ(st::GpuMemory::From(r).bytes, 4096u);
  EXPECT_EQ(st::CorrelationOf(r), 43u);
}

// The field lists are the wire order: the names and counts the rest of profsh relies on.
TEST(GpuActivity, FieldListsAreTheWireOrder) {
  EXPECT_EQ(st::GpuKernel::kFields, 18u);
  EXPECT_EQ(st::GpuKernel::kFieldNames[5], "correlation");
  EXPECT_EQ(st::GpuMemcpy::kFields, 13u);
  EXPECT_EQ(st::GpuApi::kFieldNames[3], "correlation");
  EXPECT_EQ(st::GpuSync::kFieldNames[4], "correlation");
  EXPECT_EQ(st::GpuDrops::kFields, 5u);
  // Overheads, devices, contexts and counts link to no launch.
  st::GpuRecord r;
  st::GpuOverhead{.start = 1, .end = 2, .thread = 5}.PackInto(&r);
  EXPECT_EQ(st::CorrelationOf(r), 0u);
  st::GpuContext{.context = 3, .device = 1}.PackInto(&r);
  EXPECT_EQ(st::CorrelationOf(r), 0u);
  EXPECT_FALSE(st::IsDeviceWork(r.kind));
  EXPECT_TRUE(st::IsDeviceWork(st::kGpuMemset));
  EXPECT_FALSE(st::IsDeviceWork(st::kGpuSync));
}

// Records of other versions: a newer writer's extra fields are ignored, an older writer's
// missing ones read as 0, and an unknown kind is not visited.
TEST(GpuActivity, RecordsOfOtherVersionsReadByName) {
  st::GpuRecord longer;
  longer.kind = st::kGpuSync;
  longer.count = st::GpuSync::kFields + 2;
  for (uint32_t i = 0; i < longer.count; ++i) longer.f[i] = 100 + i;
  const st::GpuSync sync = st::GpuSync::From(longer);
  EXPECT_EQ(sync.start, 100u);
  EXPECT_EQ(sync.event, 106u);
  st::GpuRecord shorter;
  shorter.kind = st::kGpuMemcpy;
  shorter.count = 6;  // up to the correlation
  for (uint32_t i = 0; i < shorter.count; ++i) shorter.f[i] = 1 + i;
  const st::GpuMemcpy copy = st::GpuMemcpy::From(shorter);
  EXPECT_EQ(copy.correlation, 6u);
  EXPECT_EQ(copy.bytes, 0u);
  EXPECT_EQ(copy.graph, 0u);
  st::GpuRecord unknown;
  unknown.kind = 200;
  unknown.count = 1;
  bool visited = false;
  EXPECT_FALSE(st::VisitGpuRecord(unknown, [&](const auto&) { visited = true; }));
  EXPECT_FALSE(visited);
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

st::GpuDevice A100() {
  return st::GpuDevice{.id = 0,
                       .sms = 108,
                       .cc_major = 8,
                       .global_memory = 42297524224,
                       .max_warps_per_sm = 64,
                       .max_blocks_per_sm = 32,
                       .registers_per_sm = 65536,
                       .shared_memory_per_sm = 167936,
                       .max_threads_per_block = 1024};
}

st::GpuKernel Kernel(uint64_t grid, uint64_t block, uint64_t registers, uint64_t shared) {
  return st::GpuKernel{.grid_x = grid,
                       .grid_y = 1,
                       .grid_z = 1,
                       .block_x = block,
                       .block_y = 1,
                       .block_z = 1,
                       .registers_per_thread = registers,
                       .static_shared = shared};
}

// The "est. achieved occupancy %" Kineto wrote for these kernels on that A100.
TEST(GpuActivity, OccupancyAsKinetoEstimatesIt) {
  const st::GpuDevice a100 = A100();
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
