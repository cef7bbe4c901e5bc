// The stream codec: every block and every event kind reads back as it was written, and what is
// cut or malformed is refused without reading past the block.
#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "engine/stream/stream_codec.h"
#include "test_util.h"

namespace profsh::stream {
namespace {

using Sink = testing::CodecSink;

// Writes `block` as a whole block and reads it back through the block iterator. The bytes
// stay alive: a decoded block's strings point into them.
template <typename Block>
Block RoundTrip(const Block& block) {
  static std::deque<Sink> written;
  Sink& out = written.emplace_back();
  AppendBlockTo(out, block);
  BlockIterator blocks(out.view(), 0);
  RawBlock raw;
  EXPECT_TRUE(blocks.Next(&raw));
  EXPECT_EQ(raw.type, Block::kType);
  EXPECT_EQ(raw.payload.size(), out.size() - sizeof(BlockHeader));
  EXPECT_FALSE(blocks.Next(&raw));
  Cursor c(raw.payload);
  Block back;
  EXPECT_TRUE(back.Decode(c));
  EXPECT_TRUE(c.AtEnd());
  // Every cut of the payload is refused.
  for (size_t n = 0; n < raw.payload.size(); ++n) {
    Cursor cut(raw.payload.substr(0, n));
    Block partial;
    EXPECT_FALSE(partial.Decode(cut)) << "payload cut at " << n << " of " << raw.payload.size();
  }
  return back;
}

TEST(StreamCodec, EveryBlockReadsBackAsWritten) {
  const EnvVar env[] = {{"RANK", "2"}, {"WORLD_SIZE", "8"}};
  ProcessBlock p;
  p.pid = 41;
  p.ppid = 1;
  p.start_ns = -5;
  p.exec_index = 2;
  p.clock_kind = kClockTsc;
  p.command_line = std::string_view("a\0b", 3);
  p.executable = "/x";
  p.hostname = "h";
  p.env = env;
  p.env_count = 2;
  Sink out;
  AppendBlockTo(out, p);
  Cursor c(out.view().substr(sizeof(BlockHeader)));
  ProcessBlock back;
  std::vector<std::pair<std::string, std::string>> vars;
  ASSERT_TRUE(back.Decode(c, [&](const EnvVar& v) { vars.emplace_back(v.key, v.value); }));
  EXPECT_EQ(back.pid, 41);
  EXPECT_EQ(back.start_ns, -5);
  EXPECT_EQ(back.exec_index, 2u);
  EXPECT_EQ(back.command_line, std::string_view("a\0b", 3));
  EXPECT_EQ(vars,
            (std::vector<std::pair<std::string, std::string>>{{"RANK", "2"}, {"WORLD_SIZE", "8"}}));

  EXPECT_EQ(RoundTrip(ClockBlock{1ull << 60, 7, -7}).ticks, 1ull << 60);
  EXPECT_EQ(RoundTrip(StringBlock{300, "name"}).text, "name");
  EXPECT_EQ(RoundTrip(ThreadBlock{5, -1, "t"}).tid, -1);
  EXPECT_EQ(RoundTrip(DropsBlock{1, 2, 3, 4}).unmatched_pops, 4u);
  EXPECT_EQ(RoundTrip(DomainBlock{9, kSourceItt, "d"}).source, kSourceItt);
  EXPECT_EQ(RoundTrip(CategoryBlock{1, 2, "c"}).id, 2u);
  EXPECT_EQ(RoundTrip(CounterBlock{3, 1, kCounterDouble, "q"}).value_type, kCounterDouble);
  EXPECT_EQ(RoundTrip(OsThreadNameBlock{77, "w"}).tid, 77);
  EXPECT_EQ(RoundTrip(EndBlock{kEndUnderscoreExit}).reason, kEndUnderscoreExit);
  EXPECT_EQ(RoundTrip(ExecBlock{"/bin/sh"}).path, "/bin/sh");
  EXPECT_EQ(RoundTrip(NoticeBlock{"n"}).text, "n");
  EXPECT_EQ(RoundTrip(ProcessDropsBlock{1, 2, 3, 4}).events_after_close, 4u);
  EXPECT_EQ(RoundTrip(StepBlock{10, -1, 3}).step, -1);
  EXPECT_EQ(RoundTrip(CaptureBlock{10, 1}).begin, 1);
  EXPECT_EQ(RoundTrip(DemandBlock{10, 4, 5}).first_step, 5);
  EXPECT_EQ(RoundTrip(StopBlock{12}).ticks, 12u);
  ConfigBlock config;
  config.flags = kConfigSchedule | kConfigMarker;
  config.schedule[3] = 2;
  config.step_marker = "^step";
  const ConfigBlock config_back = RoundTrip(config);
  EXPECT_TRUE(config_back.windowed());
  EXPECT_EQ(config_back.schedule[3], 2);
  EXPECT_EQ(config_back.step_marker, "^step");
  NameCountsBlock counts;
  counts.n = 2;
  counts.names[0] = 7;
  counts.counts[0] = 1200;
  counts.names[1] = 300;
  counts.counts[1] = 1;
  const NameCountsBlock counts_back = RoundTrip(counts);
  EXPECT_EQ(counts_back.n, 2u);
  EXPECT_EQ(counts_back.names[1], 300u);
  EXPECT_EQ(counts_back.counts[0], 1200u);
  // More names than a block holds is a malformed block, not an overrun.
  Sink too_many;
  PutVarintTo(too_many, kMostFrequentNames + 1);
  Cursor too_many_cursor(too_many.view());
  NameCountsBlock too_many_back;
  EXPECT_FALSE(too_many_back.Decode(too_many_cursor));
  // A step's action must be one torch has.
  Sink bad;
  StepBlock{1, 1, 9}.Encode(bad);
  Cursor bad_cursor(bad.view());
  StepBlock bad_step;
  EXPECT_FALSE(bad_step.Decode(bad_cursor));
}

TEST(StreamCodec, EveryEventKindReadsBackAsWritten) {
  std::vector<StreamEvent> events;
  for (uint8_t kind = 0; kind < kKindCount; ++kind) {
    StreamEvent e;
    e.ticks = 1000 + kind * 10;
    e.kind = kind;
    e.domain = kind == kOpBegin || kind == kRangeEnd || kind == kCounterSet || kind == kMemory ||
                       kind == kPause || kind == kResume || kind == kThreadEnd
                   ? 0
                   : 3;
    if (kind == kPush || kind == kMark || kind == kRangeStart || kind == kTaskBegin ||
        kind == kOpBegin || kind == kCounterSet)
      e.name = 100 + kind;
    if (kind == kRangeStart || kind == kRangeEnd) e.range_id = 1ull << 40;
    if (kind == kFrameBegin || kind == kFrameEnd) e.frame_id = 6;
    if (kind == kTaskBegin) {
      e.task_id = 8;
      e.parent_id = 9;
    }
    if (kind == kCounterSet) e.value = ZigZag(-5);
    if (kind == kMemory) {
      e.bytes = -4096;
      e.address = 0xdeadbeef;
    }
    if (kind == kPush || kind == kMark || kind == kRangeStart) {
      e.attrs.flags = kAttrCategory | kAttrColor | kAttrPayload;
      e.attrs.category = 4;
      e.attrs.color = 0xff123456;
      e.attrs.payload_type = kPayloadI64;
      e.attrs.payload = static_cast<uint64_t>(int64_t{-77});
    }
    if (kind == kOpBegin) {
      e.op = OpFields{1, 2, 3, -1, 4, 7, 99};
    }
    events.push_back(e);
  }
  Sink out;
  uint64_t previous = events.front().ticks;
  for (const StreamEvent& e : events) {
    EncodeEvent(out, previous, e);
    previous = e.ticks;
  }
  Cursor c(out.view());
  uint64_t ticks = events.front().ticks;
  for (const StreamEvent& want : events) {
    StreamEvent got;
    ASSERT_EQ(DecodeEvent(c, &ticks, &got), EventStatus::kOk) << int{want.kind};
    EXPECT_EQ(got.ticks, want.ticks);
    EXPECT_EQ(got.kind, want.kind);
    EXPECT_EQ(got.domain, want.domain) << int{want.kind};
    EXPECT_EQ(got.name, want.name) << int{want.kind};
    EXPECT_EQ(got.range_id, want.range_id);
    EXPECT_EQ(got.frame_id, want.frame_id);
    EXPECT_EQ(got.task_id, want.task_id);
    EXPECT_EQ(got.parent_id, want.parent_id);
    EXPECT_EQ(got.value, want.value);
    EXPECT_EQ(got.bytes, want.bytes);
    EXPECT_EQ(got.address, want.address);
    EXPECT_EQ(got.attrs.flags, want.attrs.flags);
    EXPECT_EQ(got.attrs.payload, want.attrs.payload);
    EXPECT_EQ(got.attrs.color, want.attrs.color);
    EXPECT_EQ(got.op.sequence, want.op.sequence);
    EXPECT_EQ(got.op.flops, want.op.flops);
    EXPECT_EQ(got.op.scope, want.op.scope);
  }
  EXPECT_TRUE(c.AtEnd());
  // An unknown kind is named as such; a cut event as malformed.
  Sink unknown;
  PutVarintTo(unknown, uint64_t{kKindCount});
  Cursor u(unknown.view());
  StreamEvent e;
  uint64_t t = 0;
  EXPECT_EQ(DecodeEvent(u, &t, &e), EventStatus::kUnknownKind);
  Cursor cut(out.view().substr(0, 2));
  t = events.front().ticks;
  EXPECT_EQ(DecodeEvent(cut, &t, &e), EventStatus::kMalformed);
}

TEST(StreamCodec, FileHeaderChecks) {
  const FileHeader h = MakeFileHeader();
  std::string bytes(reinterpret_cast<const char*>(&h), sizeof h);
  size_t at = 0;
  EXPECT_EQ(CheckFileHeader(bytes, &at), HeaderStatus::kOk);
  EXPECT_EQ(at, sizeof h);
  EXPECT_EQ(CheckFileHeader(bytes.substr(0, 10), &at), HeaderStatus::kShort);
  std::string wrong = bytes;
  wrong[0] = 'X';
  EXPECT_EQ(CheckFileHeader(wrong, &at), HeaderStatus::kBadMagic);
  FileHeader newer = h;
  newer.version = kVersion + 1;
  uint32_t version = 0;
  EXPECT_EQ(CheckFileHeader(std::string(reinterpret_cast<const char*>(&newer), sizeof newer), &at,
                            &version),
            HeaderStatus::kBadVersion);
  EXPECT_EQ(version, kVersion + 1);
  FileHeader small = h;
  small.header_size = 4;
  EXPECT_EQ(CheckFileHeader(std::string(reinterpret_cast<const char*>(&small), sizeof small), &at),
            HeaderStatus::kBadSize);
}

}  // namespace
}  // namespace profsh::stream
