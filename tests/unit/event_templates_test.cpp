// Event templates: the shape of an event parsed once, found again for the next event that has
// the same text outside its holes (the name, ts, dur, inline numbers), so that only the holes are
// parsed. The JSON importer's tests check the traces it builds; these check the index itself.
#include "engine/importers/event_templates.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace profsh {
namespace {

// An event's text and its holes, found by marking each hole with [[...]] in `marked`.
struct Marked {
  std::string text;
  std::vector<RecordedHole> holes;
  Marked(const std::string& marked, std::vector<HoleKind> kinds) {
    std::vector<std::pair<size_t, size_t>> spans;
    for (size_t i = 0; i < marked.size();) {
      if (marked.compare(i, 2, "[[") == 0) {
        const size_t close = marked.find("]]", i);
        spans.push_back({text.size(), text.size() + (close - i - 2)});
        text.append(marked, i + 2, close - i - 2);
        i = close + 2;
      } else {
        text += marked[i++];
      }
    }
    for (size_t h = 0; h < spans.size(); ++h)
      holes.push_back(
          {text.data() + spans[h].first, text.data() + spans[h].second, Hole{kinds[h], 0}});
  }
  const char* begin() const { return text.data(); }
  const char* end() const { return text.data() + text.size(); }
  std::string_view hole(size_t i) const {
    return std::string_view(holes[i].begin, static_cast<size_t>(holes[i].end - holes[i].begin));
  }
};

const std::vector<HoleKind> kNameTsDur = {HoleKind::kName, HoleKind::kTs, HoleKind::kDur};

Marked Kernel(const std::string& name, const std::string& ts) {
  return Marked(R"({"ph": "X", "cat": "kernel", "name": "[[)" + name + R"(]]", "ts": [[)" + ts +
                    R"(]], "dur": [[5]], "pid": 0, "tid": 7})",
                kNameTsDur);
}

TEST(EventTemplates, AnEventWithTheSameTextOutsideItsHolesFindsTheShape) {
  EventTemplates templates;
  const Marked first = Kernel("gemm", "100");
  EventShape shape;
  shape.phase = 'X';
  shape.category = "kernel";
  templates.Remember(first.begin(), first.end(), first.holes, shape);
  ASSERT_EQ(templates.size(), 1u);

  const Marked next = Kernel("gemm", "250");
  uint32_t prefix_id = 0;
  const EventTemplates::Prefix* prefix = templates.FindPrefix(next.begin(), next.end(), &prefix_id);
  ASSERT_NE(prefix, nullptr);
  EXPECT_EQ(prefix->text, R"({"ph": "X", "cat": "kernel", "name": ")");
  EXPECT_TRUE(prefix->has_hole);
  EXPECT_EQ(prefix->first.kind, HoleKind::kName);
  EventTemplates::ShapeSlots* slots = templates.Candidates(prefix_id, next.hole(0));
  ASSERT_NE(slots, nullptr);
  ASSERT_EQ(EventTemplates::Ids(*slots).size(), 1u);
  const EventShape& found = templates.shape(EventTemplates::Ids(*slots)[0]);
  EXPECT_EQ(found.category, "kernel");
  EXPECT_TRUE(found.has_name_hole);
  // The pieces after each hole, in order: what a matching event must have byte for byte.
  ASSERT_EQ(found.parts.size(), 3u);
  EXPECT_EQ(found.parts[1].hole.kind, HoleKind::kTs);
  EXPECT_EQ(found.text.substr(0, found.parts[0].piece_end), R"(", "ts": )");
  EXPECT_TRUE(found.text.ends_with(R"(, "pid": 0, "tid": 7})")) << found.text;
  EXPECT_EQ(found.parts[2].piece_end, found.text.size());

  // Another name with the same prefix has no candidates; another prefix finds nothing.
  EXPECT_EQ(templates.Candidates(prefix_id, "relu"), nullptr);
  const std::string other = R"({"ph": "i", "cat": "cpu_instant_event", "name": "x"})";
  EXPECT_EQ(templates.FindPrefix(other.data(), other.data() + other.size(), &prefix_id), nullptr);
}

TEST(EventTemplates, ShortEventsAreNotRemembered) {
  EventTemplates templates;
  const Marked tiny(R"({"ph":"X"})", {});
  templates.Remember(tiny.begin(), tiny.end(), tiny.holes, EventShape{});
  EXPECT_EQ(templates.size(), 0u);
}

// Names whose events rarely repeat stop being tried: past 64 attempts, once fewer than half
// matched, the name's candidates are given up.
TEST(EventTemplates, NamesThatRarelyMatchStopBeingTried) {
  EventTemplates templates;
  const Marked first = Kernel("gemm", "100");
  templates.Remember(first.begin(), first.end(), first.holes, EventShape{});
  uint32_t prefix_id = 0;
  ASSERT_NE(templates.FindPrefix(first.begin(), first.end(), &prefix_id), nullptr);
  EventTemplates::ShapeSlots* slots = templates.Candidates(prefix_id, "gemm");
  ASSERT_NE(slots, nullptr);
  for (int i = 0; i < 40; ++i) EventTemplates::Matched(*slots, EventTemplates::Ids(*slots)[0]);
  for (int i = 0; i < 40; ++i) EventTemplates::Missed(*slots);
  EXPECT_TRUE(slots->enabled());  // 40 of 80: half matched
  EventTemplates::Missed(*slots);
  EXPECT_FALSE(slots->enabled());  // 40 of 81
  EXPECT_EQ(templates.Candidates(prefix_id, "gemm"), nullptr);
}

// Up to four shapes per prefix and name, the one matched last tried first.
TEST(EventTemplates, TheShapeMatchedLastIsTriedFirst) {
  EventTemplates templates;
  std::vector<Marked> events;
  for (const char* tid : {"1", "2", "3", "4", "5"}) {
    events.emplace_back(
        R"({"ph": "X", "name": "[[op]]", "ts": [[1]], "tid": )" + std::string(tid) + "}",
        std::vector<HoleKind>{HoleKind::kName, HoleKind::kTs});
    templates.Remember(events.back().begin(), events.back().end(), events.back().holes,
                       EventShape{});
  }
  EXPECT_EQ(templates.size(), 5u);
  uint32_t prefix_id = 0;
  ASSERT_NE(templates.FindPrefix(events[0].begin(), events[0].end(), &prefix_id), nullptr);
  EventTemplates::ShapeSlots* slots = templates.Candidates(prefix_id, "op");
  ASSERT_NE(slots, nullptr);
  const auto ids = EventTemplates::Ids(*slots);
  ASSERT_EQ(ids.size(), 4u);  // the oldest shape (tid 1) gave way
  EXPECT_EQ(ids[0], 4);       // the newest first
  EventTemplates::Matched(*slots, 2);
  EXPECT_EQ(EventTemplates::Ids(*slots)[0], 2);
}

// Long names (kernel signatures) are keyed by their length and both ends: two names that agree
// on all three share their candidates (harmless: each event's name is checked against its
// template's), a name of another length does not.
TEST(EventTemplates, LongNamesAreKeyedByLengthAndEnds) {
  EventTemplates templates;
  const std::string a = "void gemm_kernel<float, 128, 64, 8>(float const*, float*, int)";
  std::string b = a;
  b[30] = '9';  // differs in the middle only
  const Marked first = Kernel(a, "100");
  templates.Remember(first.begin(), first.end(), first.holes, EventShape{});
  uint32_t prefix_id = 0;
  ASSERT_NE(templates.FindPrefix(first.begin(), first.end(), &prefix_id), nullptr);
  EXPECT_NE(templates.Candidates(prefix_id, a), nullptr);
  EXPECT_NE(templates.Candidates(prefix_id, b), nullptr);
  EXPECT_EQ(templates.Candidates(prefix_id, a + " "), nullptr);
}

}  // namespace
}  // namespace profsh
