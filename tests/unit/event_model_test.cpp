// The event model (engine/analysis/model): roles of every category spelling, ids, launch links
// with all their candidates, the range tree's tie rule, typed shapes, and the cache on the trace.
#include "engine/analysis/model/event_model.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "engine/trace/trace_builder.h"
#include "test_util.h"

namespace profsh {
namespace {

size_t EventNamed(const Trace& t, std::string_view name, size_t nth = 0) {
  for (size_t i = 0; i < t.events.size(); ++i)
    if (t.str(t.events.name(i)) == name && nth-- == 0) return i;
  throw std::runtime_error("no event " + std::string(name));
}

TEST(EventModel, EveryCategorySpellingHasItsRole) {
  struct Case {
    const char* category;
    EventRole role;
    EventKind kind;
    DeviceWorkKind work;
    AnnotationSource source;
  };
  const Case cases[] = {
      // torch 2.x / Kineto, torch 1.x's capitalized spellings, MTIA, profsh's emitter.
      {"kernel", EventRole::kDeviceWork, EventKind::kKernel, DeviceWorkKind::kKernel, {}},
      {"Kernel", EventRole::kDeviceWork, EventKind::kKernel, DeviceWorkKind::kKernel, {}},
      {"mtia_ccp_events", EventRole::kDeviceWork, EventKind::kKernel, DeviceWorkKind::kKernel, {}},
      {"gpu_memcpy", EventRole::kDeviceWork, EventKind::kCopy, DeviceWorkKind::kMemcpy, {}},
      {"Memcpy", EventRole::kDeviceWork, EventKind::kCopy, DeviceWorkKind::kMemcpy, {}},
      {"gpu_memset", EventRole::kDeviceWork, EventKind::kSet, DeviceWorkKind::kMemset, {}},
      {"Memset", EventRole::kDeviceWork, EventKind::kSet, DeviceWorkKind::kMemset, {}},
      {"cuda_sync", EventRole::kDeviceWork, EventKind::kOther, DeviceWorkKind::kSync, {}},
      {"cuda_runtime", EventRole::kRuntime, EventKind::kRuntime, {}, {}},
      {"cuda_driver", EventRole::kRuntime, EventKind::kRuntime, {}, {}},
      {"Runtime", EventRole::kRuntime, EventKind::kRuntime, {}, {}},
      {"xpu_driver", EventRole::kRuntime, EventKind::kRuntime, {}, {}},
      {"mtia_runtime", EventRole::kRuntime, EventKind::kRuntime, {}, {}},
      {"user_annotation",
       EventRole::kAnnotation,
       EventKind::kAnnotation,
       {},
       AnnotationSource::kRecordFunction},
      {"nvtx", EventRole::kAnnotation, EventKind::kAnnotation, {}, AnnotationSource::kNvtx},
      {"itt", EventRole::kAnnotation, EventKind::kAnnotation, {}, AnnotationSource::kItt},
      {"gpu_user_annotation",
       EventRole::kGpuAnnotation,
       EventKind::kAnnotation,
       {},
       AnnotationSource::kRecordFunction},
      {"python_function", EventRole::kPythonFunction, EventKind::kOther, {}, {}},
      {"cpu_op", EventRole::kCpuOp, EventKind::kCpuOp, {}, {}},
      {"Operator", EventRole::kCpuOp, EventKind::kCpuOp, {}, {}},
      {"Trace", EventRole::kOther, EventKind::kOther, {}, {}},
      {"ac2g", EventRole::kOther, EventKind::kOther, {}, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.category);
    const CategoryRole r = ClassifyCategory(c.category);
    EXPECT_EQ(r.role, c.role);
    EXPECT_EQ(r.kind, c.kind);
    EXPECT_EQ(KindOfCategory(c.category), c.kind);  // EventKind's entry point agrees
    if (c.role == EventRole::kDeviceWork) {
      EXPECT_EQ(r.work, c.work);
    }
    EXPECT_EQ(r.source, c.source);
  }
}

const char kTwoCandidates[] = R"json({"traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 1, "tid": 1, "ts": 0,
   "dur": 500},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 50,
   "args": {"External id": 40, "Input Dims": [[2, 3], [], [[4], [5, 6]], 7],
            "Input type": ["float", "Scalar\n", "TensorList", ""]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20,
   "dur": 5, "args": {"correlation": 9, "External id": 40}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernelExC", "pid": 1, "tid": 2,
   "ts": 300, "dur": 5, "args": {"correlation": 9}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 30, "dur": 20,
   "args": {"correlation": 9, "External id": 40, "device": 0, "stream": 7}},
  {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 60,
   "dur": 2, "args": {"correlation": 11, "device": 0, "stream": "seven", "bytes": 64}},
  {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 12,
   "args": {"Bytes": 16}}
]})json";

TEST(EventModel, IdsAreTypedAndKeptPerRole) {
  auto trace = testing::MustImport(kTwoCandidates);
  const EventModel& m = ModelOf(*trace);
  const EventIds& ids = m.ids();
  ASSERT_EQ(ids.device_work.size(), 2u);
  EXPECT_EQ(ids.device_work.correlation[0], 9);
  EXPECT_EQ(ids.device_work.external[0], 40);
  EXPECT_EQ(ids.device_work.stream[0], 7);
  EXPECT_EQ(ids.device_work.stream[1], kNoId);  // text is not a stream number
  EXPECT_EQ(ids.device_work.external[1], kNoId);
  ASSERT_EQ(ids.runtime.size(), 2u);
  EXPECT_EQ(ids.runtime.external[1], kNoId);
  ASSERT_EQ(ids.ranges.size(), 2u);  // the step's range and the operator
  ASSERT_EQ(ids.steps.size(), 1u);
  EXPECT_EQ(ids.steps[0].number, 7);
  EXPECT_EQ(m.role(EventNamed(*trace, "[memory]")).role, EventRole::kMemory);
  EXPECT_TRUE(m.role(EventNamed(*trace, "aten::mm")).aten);
  EXPECT_EQ(m.args().Int(EventNamed(*trace, "Memset (Device)"), KnownArg::kCopyBytes), 64);
}

TEST(EventModel, AKernelKeepsEveryRuntimeCandidateInTraceOrder) {
  auto trace = testing::MustImport(kTwoCandidates);
  const EventModel& m = ModelOf(*trace);
  const auto candidates = m.links().RuntimeCandidates(0);
  ASSERT_EQ(candidates.size(), 2u);
  const auto name_of = [&](uint32_t r) {
    return std::string(trace->str(trace->events.name(m.ids().runtime.event[r])));
  };
  EXPECT_EQ(name_of(FirstCandidate(candidates)), "cudaLaunchKernel");
  EXPECT_EQ(name_of(LastCandidate(candidates)), "cudaLaunchKernelExC");
  EXPECT_EQ(FirstCandidate(m.links().RuntimeCandidates(1)), kNoIndex);  // no call has 11
  // The operator by External id, from the kernel and from its runtime call.
  ASSERT_EQ(m.links().RangeCandidatesOfWork(0).size(), 1u);
  EXPECT_EQ(m.ids().ranges.event[m.links().RangeCandidatesOfWork(0)[0]],
            EventNamed(*trace, "aten::mm"));
  EXPECT_EQ(m.links().RangeCandidatesOfRuntime(0).size(), 1u);
  EXPECT_TRUE(m.links().RangeCandidatesOfRuntime(1).empty());
  // The ranges around each call: the step and the operator on tid 1, none on tid 2.
  std::vector<uint32_t> around;
  m.EnclosingRanges(0, &around);
  ASSERT_EQ(around.size(), 2u);
  EXPECT_EQ(m.ids().ranges.event[around[0]], EventNamed(*trace, "ProfilerStep#7"));
  EXPECT_EQ(m.ids().ranges.event[around[1]], EventNamed(*trace, "aten::mm"));
  m.EnclosingRanges(1, &around);
  EXPECT_TRUE(around.empty());
  // The ranges' extents, made on request: the step's [0, 500) µs on tid 1's track.
  ASSERT_EQ(m.range_extents().size(), 2u);
  EXPECT_EQ(m.range_extents()[0].end, 500'000);
  EXPECT_EQ(m.range_extents()[1].track, m.range_extents()[0].track);
}

TEST(EventModel, RangesWithEqualStartsNestLongerOuterThenTraceOrder) {
  // a and b start together, a is longer: a is the parent. c and d are identical: the earlier (c)
  // is the parent. e starts where d ends: not inside d, but inside a. f sticks out of e's end:
  // still e's child, and open ranges at a call after e ended skip e.
  const std::vector<RangeExtent> r = {
      {0, 100, 1},  // a
      {0, 50, 1},   // b
      {10, 20, 1},  // c
      {10, 20, 1},  // d
      {20, 30, 1},  // e
      {25, 60, 1},  // f
      {0, 100, 2},  // another track: its own root
  };
  const RangeTree tree = NestRanges(r);
  EXPECT_EQ(tree.parent[0], kNoIndex);
  EXPECT_EQ(tree.parent[1], 0u);
  EXPECT_EQ(tree.parent[2], 1u);
  EXPECT_EQ(tree.parent[3], 2u);
  EXPECT_EQ(tree.parent[4], 1u);
  EXPECT_EQ(tree.parent[5], 4u);
  EXPECT_EQ(tree.parent[6], kNoIndex);
  EXPECT_EQ(tree.depth[3], 3);
  EXPECT_EQ(tree.children[1], 2);
  const std::vector<TrackInstant> calls = {{40, 1}, {0, 2}, {100, 1}, {10, 1}};
  const auto innermost = InnermostOpenRanges(r, tree, calls);
  EXPECT_EQ(innermost[0], 5u);
  EXPECT_EQ(innermost[1], 6u);
  EXPECT_EQ(innermost[2], kNoIndex);  // every range ended at or before 100
  EXPECT_EQ(innermost[3], 3u);        // a range starting at the call's instant is open there
  std::vector<uint32_t> open;
  OpenRangesAt(
      tree, innermost[0], 40, [&](uint32_t k) { return r[k].end; }, &open);
  EXPECT_EQ(open, (std::vector<uint32_t>{0, 1, 5}));  // e (ended at 30) is skipped
}

TEST(EventModel, RangesOutOfTimeOrderNestAsInOrder) {
  // The ranges of the test above, shuffled and on interleaved tracks (the sort the tree skips
  // for a track already in order), then on track ids too sparse to count per track.
  for (const uint32_t track_base : {0u, 1'000'000u}) {
    const uint32_t t1 = track_base + 1, t2 = track_base + 2;
    const std::vector<RangeExtent> r = {
        {25, 60, t1},  // f
        {0, 100, t2},  // another track's root
        {10, 20, t1},  // c
        {0, 50, t1},   // b
        {20, 30, t1},  // e
        {0, 100, t1},  // a
        {10, 20, t1},  // d: identical to c, later in the trace
    };
    const RangeTree tree = NestRanges(r);
    EXPECT_EQ(tree.order, (std::vector<uint32_t>{5, 3, 2, 6, 4, 0, 1}));
    EXPECT_EQ(tree.parent[5], kNoIndex);
    EXPECT_EQ(tree.parent[3], 5u);
    EXPECT_EQ(tree.parent[2], 3u);
    EXPECT_EQ(tree.parent[6], 2u);
    EXPECT_EQ(tree.parent[4], 3u);
    EXPECT_EQ(tree.parent[0], 4u);
    EXPECT_EQ(tree.parent[1], kNoIndex);
    const std::vector<TrackInstant> calls = {{100, t1}, {40, t1}, {0, t2}, {10, t1}};
    EXPECT_EQ(InnermostOpenRanges(r, tree, calls), (std::vector<uint32_t>{kNoIndex, 0, 1, 6}));
  }
}

TEST(EventModel, IdGroupsKeepTraceOrderWhenIdsAreNotAscending) {
  // Dense ids (grouped through a table by id) and sparse ones (sorted), in and out of order.
  for (const int64_t scale : {int64_t{1}, int64_t{1'000'000'000'000}}) {
    const IdGroups groups(
        {7 * scale, 3 * scale, kNoId, 7 * scale, 3 * scale, 5 * scale, 7 * scale});
    ASSERT_EQ(groups.group_count(), 3u);
    const auto seven = groups.Members(groups.GroupOf(7 * scale));
    EXPECT_EQ(std::vector<uint32_t>(seven.begin(), seven.end()), (std::vector<uint32_t>{0, 3, 6}));
    EXPECT_EQ(FirstCandidate(groups.Members(groups.GroupOf(3 * scale))), 1u);
    EXPECT_EQ(LastCandidate(groups.Members(groups.GroupOf(3 * scale))), 4u);
    EXPECT_EQ(groups.Members(groups.GroupOf(5 * scale)).size(), 1u);
    EXPECT_EQ(groups.GroupOf(kNoId), kNoIndex);
    EXPECT_EQ(groups.GroupOf(4 * scale), kNoIndex);
    EXPECT_EQ(groups.GroupOf(2 * scale), kNoIndex);  // below the lowest
    EXPECT_EQ(groups.GroupOf(8 * scale), kNoIndex);  // above the highest
    const IdGroups ascending({scale, scale, 2 * scale, kNoId, 9 * scale});
    ASSERT_EQ(ascending.group_count(), 3u);
    EXPECT_EQ(ascending.Members(ascending.GroupOf(scale)).size(), 2u);
    EXPECT_EQ(FirstCandidate(ascending.Members(ascending.GroupOf(9 * scale))), 4u);
  }
  // The ends of the integer range, and no ids at all.
  const IdGroups ends({INT64_MAX, kNoId + 1, INT64_MAX});
  EXPECT_EQ(ends.Members(ends.GroupOf(INT64_MAX)).size(), 2u);
  EXPECT_EQ(FirstCandidate(ends.Members(ends.GroupOf(kNoId + 1))), 1u);
  EXPECT_EQ(IdGroups(std::vector<int64_t>{kNoId}).group_count(), 0u);
  EXPECT_TRUE(IdGroups(std::vector<int64_t>{kNoId}).Members(kNoIndex).empty());
}

TEST(EventModel, RangeNestingIsMadeWhenFirstAskedAndNotAfterTheEventsChange) {
  auto trace = testing::MustImport(kTwoCandidates);
  std::shared_ptr<const EventModel> kept = SharedModelOf(*trace);
  trace->events.ShiftTs(EventNamed(*trace, "cudaLaunchKernel"), 1'000'000);
  // Made now, it would mix the model's ids with the moved times.
  EXPECT_THROW(kept->range_tree(), std::logic_error);
  EXPECT_THROW(kept->range_extents(), std::logic_error);
  EXPECT_EQ(kept->links().RuntimeCandidates(0).size(), 2u);  // built with the model: still there
}

TEST(EventModel, ShapesAndTypesAreTypedValues) {
  auto trace = testing::MustImport(kTwoCandidates);
  const EventModel& m = ModelOf(*trace);
  const size_t mm = EventNamed(*trace, "aten::mm");
  const std::vector<InputShape>* shapes = m.args().InputShapes(mm);
  ASSERT_NE(shapes, nullptr);
  ASSERT_EQ(shapes->size(), 4u);
  EXPECT_EQ((*shapes)[0].kind, InputShape::Kind::kSizes);
  EXPECT_EQ((*shapes)[0].sizes, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ((*shapes)[1].kind, InputShape::Kind::kSizes);
  EXPECT_TRUE((*shapes)[1].sizes.empty());
  EXPECT_EQ((*shapes)[2].kind, InputShape::Kind::kList);
  EXPECT_EQ((*shapes)[2].list, (std::vector<std::vector<int64_t>>{{4}, {5, 6}}));
  EXPECT_EQ((*shapes)[3].kind, InputShape::Kind::kOther);
  const std::vector<std::string>* types = m.args().InputTypes(mm);
  ASSERT_NE(types, nullptr);
  EXPECT_EQ(*types, (std::vector<std::string>{"float", "Scalar\n", "TensorList", ""}));
  EXPECT_EQ(m.args().InputShapes(EventNamed(*trace, "gemm")), nullptr);
  EXPECT_EQ(ParseStringList(R"(["a\"b", "\u00e9\ud83d\ude00"])"),
            (std::vector<std::string>{"a\"b", "\xc3\xa9\xf0\x9f\x98\x80"}));
}

TEST(EventModel, BuiltOnceAndRebuiltAfterTheEventsChange) {
  auto trace = testing::MustImport(kTwoCandidates);
  const uint64_t before = trace->derived.builds();
  const EventModel* first = &ModelOf(*trace);
  EXPECT_EQ(&ModelOf(*trace), first);
  EXPECT_EQ(trace->derived.builds(), before + 1);
  // Rank alignment moves events in time: the model is built anew and sees the move.
  std::shared_ptr<const EventModel> kept = SharedModelOf(*trace);
  EXPECT_EQ(kept->InnermostRange(0), 1u);  // the nesting is made here, from the times before
  trace->events.ShiftTs(EventNamed(*trace, "cudaLaunchKernel"), 1'000'000);  // 1 ms
  const EventModel& moved = ModelOf(*trace);
  EXPECT_EQ(trace->derived.builds(), before + 2);
  std::vector<uint32_t> around;
  moved.EnclosingRanges(0, &around);
  EXPECT_EQ(around.size(), 0u);   // the call now starts after the step and the operator ended
  EXPECT_NE(kept.get(), &moved);  // the one kept from before stays alive beside it
  EXPECT_EQ(kept->InnermostRange(0), 1u);
  // Appending events (trace_append, a builder) changes them too.
  TraceBuilder builder(*trace);
  EventFields e;
  e.name = "aten::relu";
  e.category = "cpu_op";
  e.pid = Ident{1, 0, false};
  e.tid = Ident{1, 0, false};
  e.ts = 1000;
  e.dur = 10;
  builder.AddEvent(e, TraceBuilder::kNoArgs, {});
  EXPECT_EQ(ModelOf(*trace).ids().ranges.size(), 3u);
  EXPECT_EQ(ModelOf(*trace).ids().ranges.event[0], EventNamed(*trace, "ProfilerStep#7"));
}

}  // namespace
}  // namespace profsh
