// The per-event path against a drain thread that does not come (runtime.h, events.cpp): the
// collector's guarantees that hold whatever the scheduler does. Each test gives the runtime
// one thread slot with a small ring and no drain thread, so what fits and what is dropped
// follows from the ring's size alone; each runs on the inline fast path (TSC clock) and on the
// general path (no TSC), which must agree.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>

#include "engine/collector/runtime/runtime.h"

namespace profsh::runtime {
namespace {

constexpr uint64_t kRing = 4096;  // records (64 KiB)
constexpr uint32_t kName = 7;     // any untagged string id

class StalledDrain : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    slot_ = new ThreadSlot();
    slot_->mask = kRing - 1;
    g.slots = slot_;
    g.slot_count = 1;
    g.ring_records = kRing;
    g.use_tsc = GetParam();
    g.off.store(0);
    g.drain_bell.store(0);
    g.active = true;
  }
  void TearDown() override {
    g.active = false;
    g.use_tsc = false;
    g.slots = nullptr;
    g.slot_count = 0;
    t_slot = nullptr;
    if (slot_->ring != nullptr) munmap(slot_->ring, kRing * sizeof(Record));
    delete slot_;
  }
  uint64_t Head() const { return slot_->head.load(); }
  // The drain thread's round, as far as the producer can tell: everything is taken.
  void Drained() { slot_->tail.store(Head()); }
  void Pairs(uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) {
      EmitPush(stream::kPush, 0, 0, kName, nullptr);
      EmitPop(stream::kPop, 0);
    }
  }

  ThreadSlot* slot_ = nullptr;
};

TEST_P(StalledDrain, AFullRingDropsWholeRangesAndCountsEachOne) {
  Pairs(10000);
  // A push needs its record and the pop reserve free: pushes at heads 0, 2, ... 3838 fit
  // (3838 + 1 + 256 <= 4096), each with its pop; every later push is dropped with its pop.
  const uint64_t recorded = (kRing - kPopReserve - 1) / 2 + 1;
  EXPECT_EQ(recorded, 1920u);
  EXPECT_EQ(Head(), 2 * recorded);
  EXPECT_EQ(slot_->dropped_ranges.load(), 10000 - recorded);
  EXPECT_EQ(slot_->dropped_events.load(), 0u);
  EXPECT_EQ(slot_->depth, 0u);
  for (uint64_t i = 0; i < Head(); ++i) {
    EXPECT_EQ(slot_->ring[i].kind, i % 2 ? stream::kPop : stream::kPush) << "record " << i;
    if (i % 2 == 0) {
      EXPECT_EQ(slot_->ring[i].name, kName) << "record " << i;
    }
  }
}

TEST_P(StalledDrain, RecordingResumesOnceTheDrainHasTakenTheRing) {
  Pairs(3000);
  const uint64_t dropped = slot_->dropped_ranges.load();
  ASSERT_GT(dropped, 0u);
  Drained();
  Pairs(1000);
  EXPECT_EQ(slot_->dropped_ranges.load(), dropped);
  EXPECT_EQ(slot_->tail.load() + 2000, Head());
}

TEST_P(StalledDrain, PopsOfRecordedPushesAlwaysFit) {
  constexpr uint32_t kDepth = 200;  // below kPopReserve
  for (uint32_t i = 0; i < kDepth; ++i) EmitPush(stream::kPush, 0, 0, kName, nullptr);
  // Marks until the ring refuses them: only the pop reserve is left.
  uint64_t refused = 0;
  for (int i = 0; i < 5000; ++i) refused += !EmitSimple(stream::kMark, 0, 0, kName, nullptr);
  EXPECT_EQ(Head(), kRing - kPopReserve);
  EXPECT_EQ(slot_->dropped_events.load(), refused);
  for (uint32_t i = 0; i < kDepth; ++i) EmitPop(stream::kPop, 0);
  EXPECT_EQ(Head(), kRing - kPopReserve + kDepth);
  EXPECT_EQ(slot_->depth, 0u);
  EXPECT_EQ(slot_->dropped_ranges.load(), 0u);
}

TEST_P(StalledDrain, TheBellRingsOnceARingIsAQuarterFull) {
  // 512 pairs fill records 0..1023: under a quarter when the 512th push reserved its record.
  Pairs(512);
  EXPECT_EQ(g.drain_bell.load(), 0u);
  Pairs(1);  // its push takes record 1024: the ring holds a quarter
  EXPECT_EQ(g.drain_bell.load(), 1u);
  // Rung and not yet answered: later crossings leave it as it is (no second wake).
  Pairs(1500);
  EXPECT_EQ(g.drain_bell.load(), 1u);
}

#if defined(__x86_64__) || defined(__i386__)
INSTANTIATE_TEST_SUITE_P(Clock, StalledDrain, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Tsc" : "NoTsc"; });
#else
INSTANTIATE_TEST_SUITE_P(Clock, StalledDrain, ::testing::Values(false),
                         [](const auto&) { return "NoTsc"; });
#endif

}  // namespace
}  // namespace profsh::runtime
