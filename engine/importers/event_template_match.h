// The template fast path of the Chrome JSON reader: an event whose text matches a template of an
// earlier event (event_templates.h) outside its holes is read by parsing the holes alone.
#pragma once

#include "engine/importers/event_templates.h"
#include "engine/importers/json_tokenizer.h"

namespace profsh {

struct ChromeEvent;

// Matches the event at the cursor (its '{', event.start) against the templates. On a match, the
// holes are read into `event` (name, ts, dur, the signature's inline numbers), the cursor ends
// after the event and its shape is returned. Otherwise nullptr, with the cursor at the event's
// start. Repairs must be refused meanwhile (UnitRepairs::Mode::kRefuse): an event that needs one
// takes the full path, which counts it.
EventShape* MatchEventTemplate(JsonTokenizer& json, EventTemplates& templates, ChromeEvent& event);

}  // namespace profsh
