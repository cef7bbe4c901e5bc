#include "engine/importers/event_templates.h"

#include <algorithm>
#include <cstring>

#include "engine/util/hash.h"

namespace profsh {

uint64_t EventTemplates::ShapeKey(uint32_t prefix_id, std::string_view first_hole) {
  const uint64_t seed = prefix_id * 0x9E3779B97F4A7C15ULL + 1;
  if (first_hole.size() <= 2 * kKeyBytes) return HashBytes(first_hole, seed);
  // Long names (kernel signatures) are keyed by their length and both ends. Names that agree on
  // all three share their candidates, which is harmless: a shape holds no name, and the name of
  // each event is checked against its template's.
  char ends[2 * kKeyBytes];
  std::memcpy(ends, first_hole.data(), kKeyBytes);
  std::memcpy(ends + kKeyBytes, first_hole.data() + first_hole.size() - kKeyBytes, kKeyBytes);
  return HashBytes(ends, sizeof(ends), seed ^ first_hole.size());
}

void EventTemplates::HashIndex::Insert(uint64_t hash, int32_t index) {
  if ((used_ + 1) * 2 > slots_.size()) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    used_ = 0;
    for (const Slot& s : old) {
      if (s.index >= 0) Insert(s.hash, s.index);
    }
  }
  size_t pos = hash & mask_;
  while (slots_[pos].index >= 0) pos = (pos + 1) & mask_;
  slots_[pos] = Slot{hash, index};
  ++used_;
}

const EventTemplates::Prefix* EventTemplates::FindPrefix(const char* input, const char* end,
                                                         uint32_t* prefix_id) {
  if (end - input < static_cast<ptrdiff_t>(kKeyBytes)) return nullptr;
  int32_t index = prefix_index_.Find(HashBytes(input, kKeyBytes));
  if (index < 0) return nullptr;
  PrefixSlots& slots = prefix_slots_[index];
  for (uint32_t i = 0; i < slots.count; ++i) {
    const Prefix& p = prefixes_[slots.ids[i]];
    if (static_cast<size_t>(end - input) > p.text.size() &&
        std::memcmp(input, p.text.data(), p.text.size()) == 0) {
      *prefix_id = static_cast<uint32_t>(slots.ids[i]);
      std::rotate(slots.ids.begin(), slots.ids.begin() + i, slots.ids.begin() + i + 1);
      return &p;
    }
  }
  return nullptr;
}

EventTemplates::ShapeSlots* EventTemplates::Candidates(uint32_t prefix_id,
                                                       std::string_view first_hole) {
  int32_t index = shape_index_.Find(ShapeKey(prefix_id, first_hole));
  if (index < 0 || !shape_slots_[index].enabled()) return nullptr;
  return &shape_slots_[index];
}

void EventTemplates::Matched(ShapeSlots& slots, int32_t shape_id) {
  ++slots.attempts;
  ++slots.hits;
  auto pos = std::find(slots.ids.begin(), slots.ids.begin() + slots.count, shape_id);
  std::rotate(slots.ids.begin(), pos, pos + 1);  // most recently used first
}

void EventTemplates::Remember(const char* begin, const char* end,
                              std::span<const RecordedHole> holes, EventShape shape) {
  if (shapes_.size() >= kMaxShapes || end - begin < static_cast<ptrdiff_t>(kKeyBytes)) return;
  const char* prefix_end = holes.empty() ? end : holes[0].begin;
  if (prefix_end - begin < static_cast<ptrdiff_t>(kKeyBytes)) return;  // too short to find again
  std::string_view prefix_text(begin, static_cast<size_t>(prefix_end - begin));

  // Find or add the prefix.
  const uint64_t prefix_hash = HashBytes(begin, kKeyBytes);
  int32_t pslots_index = prefix_index_.Find(prefix_hash);
  if (pslots_index < 0) {
    pslots_index = static_cast<int32_t>(prefix_slots_.size());
    prefix_slots_.emplace_back();
    prefix_index_.Insert(prefix_hash, pslots_index);
  }
  PrefixSlots& pslots = prefix_slots_[pslots_index];
  int32_t prefix_id = -1;
  for (uint32_t i = 0; i < pslots.count; ++i) {
    const Prefix& p = prefixes_[pslots.ids[i]];
    if (p.text == prefix_text && p.has_hole == !holes.empty() &&
        (holes.empty() || p.first.kind == holes[0].hole.kind)) {
      prefix_id = pslots.ids[i];
      break;
    }
  }
  if (prefix_id < 0) {
    if (pslots.count == kPrefixesPerKey) return;  // enough shapes of events start this way
    prefix_id = static_cast<int32_t>(prefixes_.size());
    Prefix p;
    p.text.assign(prefix_text);
    p.has_hole = !holes.empty();
    if (p.has_hole) p.first = holes[0].hole;
    prefixes_.push_back(std::move(p));
    pslots.ids[pslots.count++] = prefix_id;
  }

  std::string_view first_hole =
      holes.empty()
          ? std::string_view()
          : std::string_view(holes[0].begin, static_cast<size_t>(holes[0].end - holes[0].begin));
  if (holes.empty() || holes[0].hole.kind != HoleKind::kName) first_hole = std::string_view();
  const uint64_t shape_key = ShapeKey(static_cast<uint32_t>(prefix_id), first_hole);
  int32_t slots_index = shape_index_.Find(shape_key);
  if (slots_index < 0) {
    slots_index = static_cast<int32_t>(shape_slots_.size());
    shape_slots_.emplace_back().ids.fill(-1);
    shape_index_.Insert(shape_key, slots_index);
  }
  ShapeSlots& slots = shape_slots_[slots_index];
  if (!slots.enabled()) return;

  for (size_t i = 0; i < holes.size(); ++i) {
    const char* piece_end = i + 1 < holes.size() ? holes[i + 1].begin : end;
    shape.text.append(holes[i].end, static_cast<size_t>(piece_end - holes[i].end));
    shape.parts.push_back(
        EventShape::Part{holes[i].hole, static_cast<uint32_t>(shape.text.size())});
    shape.has_name_hole |= holes[i].hole.kind == HoleKind::kName;
  }
  int32_t id = static_cast<int32_t>(shapes_.size());
  shapes_.push_back(std::move(shape));
  if (slots.count < kShapesPerKey) ++slots.count;
  std::rotate(slots.ids.begin(), slots.ids.begin() + slots.count - 1,
              slots.ids.begin() + slots.count);
  slots.ids[0] = id;
}

}  // namespace profsh
