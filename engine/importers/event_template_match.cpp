#include "engine/importers/event_template_match.h"

#include <cstring>

#include "engine/importers/chrome_event_schema.h"

namespace profsh {

namespace {

using json::IsDigit;

class TemplateMatcher {
 public:
  TemplateMatcher(JsonTokenizer& json, ChromeEvent& event) : json_(json), event_(event) {}

  EventShape* Match(EventTemplates& templates);

 private:
  bool MatchShape(const EventShape& shape, const char* q);
  // An inline number at the cursor, added to the signature; *type is its hole type.
  Step ScanInline(const char* at, uint8_t* type);
  // Parses one hole's value at `at`; the cursor ends after it. Inline numbers must have the
  // hole's type.
  Step ParseHole(const Hole& hole, const char* at);
  Step ParseTime(int64_t* out);

  JsonTokenizer& json_;
  ChromeEvent& event_;
};

EventShape* TemplateMatcher::Match(EventTemplates& templates) {
  uint32_t prefix_id;
  const EventTemplates::Prefix* prefix = templates.FindPrefix(json_.pos(), json_.end(), &prefix_id);
  if (prefix == nullptr) return nullptr;
  const char* q = json_.pos() + prefix->text.size();
  json_.ClearDecoded();
  event_.signature.Clear();
  event_.has_name = false;
  std::string_view first_text;
  if (prefix->has_hole) {
    // The first hole decides the candidates; for an inline number its type is checked per shape.
    Hole first = prefix->first;
    const char* saved = json_.pos();
    uint8_t ignored;
    Step read = first.kind == HoleKind::kInline ? ScanInline(q, &ignored) : ParseHole(first, q);
    if (read != Step::kOk) {
      json_.set_pos(saved);
      return nullptr;
    }
    if (first.kind == HoleKind::kName)
      first_text = std::string_view(q, static_cast<size_t>(json_.pos() - q));
    q = json_.pos();
    json_.set_pos(saved);
  }
  EventTemplates::ShapeSlots* slots = templates.Candidates(prefix_id, first_text);
  if (slots == nullptr) {
    json_.set_pos(event_.start);
    return nullptr;
  }
  for (int32_t id : EventTemplates::Ids(*slots)) {
    EventShape& shape = templates.shape(id);
    if (prefix->has_hole && prefix->first.kind == HoleKind::kInline &&
        shape.parts[0].hole.inline_type != event_.signature.inline_type(0)) {
      continue;
    }
    size_t inlines = event_.signature.inline_count();
    if (MatchShape(shape, q)) {
      EventTemplates::Matched(*slots, id);
      return &shape;
    }
    event_.signature.Truncate(0, inlines);
  }
  EventTemplates::Missed(*slots);
  json_.set_pos(event_.start);
  return nullptr;
}

// Matches the rest of an event (after its first hole) against one shape.
bool TemplateMatcher::MatchShape(const EventShape& shape, const char* q) {
  const char* saved = json_.pos();
  const char* text = shape.text.data();
  uint32_t piece_begin = 0;
  for (size_t i = 0; i < shape.parts.size(); ++i) {
    const EventShape::Part& part = shape.parts[i];
    if (i > 0) {
      if (ParseHole(part.hole, q) != Step::kOk) {
        json_.set_pos(saved);
        return false;
      }
      q = json_.pos();
    }
    const size_t size = part.piece_end - piece_begin;
    if (static_cast<size_t>(json_.end() - q) < size ||
        std::memcmp(q, text + piece_begin, size) != 0) {
      json_.set_pos(saved);
      return false;
    }
    q += size;
    piece_begin = part.piece_end;
  }
  event_.has_name = shape.has_name_hole;
  json_.set_pos(q);
  return true;
}

Step TemplateMatcher::ScanInline(const char* at, uint8_t* type) {
  // Ids and counts, most inline numbers, take one word.
  uint32_t small;
  if (json_.FastSmallInt(at, &small)) {
    event_.signature.AddInlineInt(static_cast<int32_t>(small));
    *type = static_cast<uint8_t>(ArgType::kInt);
    return Step::kOk;
  }
  json_.set_pos(at);
  const char* begin;
  bool is_integer;
  PROFSH_TRY(json_.ScanNumber(&begin, &is_integer));
  const ArgValue v = NumberArg(json::ConvertNumber(begin, json_.pos(), is_integer));
  event_.signature.AddInline(v);
  *type = Hole::InlineType(v);
  return Step::kOk;
}

Step TemplateMatcher::ParseTime(int64_t* out) {
  if (json_.FastMicros(out)) return Step::kOk;
  if (json_.pos() >= json_.end()) return Step::kError;
  if (json_.peek() != '-' && !IsDigit(json_.peek())) return Step::kError;
  const char* begin;
  bool is_integer;
  PROFSH_TRY(json_.ScanNumber(&begin, &is_integer));
  // Out of range: the full path says so.
  return json::MicrosToNanos(begin, json_.pos(), is_integer, out) ? Step::kOk : Step::kError;
}

Step TemplateMatcher::ParseHole(const Hole& hole, const char* at) {
  json_.set_pos(at);
  switch (hole.kind) {
    case HoleKind::kName:
      if (at >= json_.end() || *at != '"') return Step::kError;
      return json_.ScanString(&event_.name, true);
    case HoleKind::kTs:
      return ParseTime(&event_.ts);
    case HoleKind::kDur:
      return ParseTime(&event_.dur);
    case HoleKind::kInline: {
      uint8_t type;
      PROFSH_TRY(ScanInline(at, &type));
      // A number of another type than the template's: no match (the caller drops what was added).
      return type == hole.inline_type ? Step::kOk : Step::kError;
    }
  }
  return Step::kError;
}

}  // namespace

EventShape* MatchEventTemplate(JsonTokenizer& json, EventTemplates& templates, ChromeEvent& event) {
  return TemplateMatcher(json, event).Match(templates);
}

}  // namespace profsh
