#include "engine/trace/trace_builder.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <numeric>

#include "engine/util/hash.h"
#include "engine/util/json_scan.h"

namespace profsh {

uint64_t ArgSignature::Hash() const {
  uint64_t h = pieces_.size() * 0x9E3779B97F4A7C15ULL + types_.size();
  for (std::string_view piece : pieces_) h = HashBytes(piece.data(), piece.size(), h);
  if (!types_.empty())
    h = HashBytes(reinterpret_cast<const char*>(types_.data()), types_.size(), h);
  return h;
}

void ArgSignature::InlineWords(std::vector<uint32_t>* out) const {
  out->clear();
  for (size_t i = 0; i < bits_.size(); ++i) {
    out->push_back(static_cast<uint32_t>(bits_[i]));
    if (types_[i] & 0x80) out->push_back(static_cast<uint32_t>(bits_[i] >> 32));
  }
}

// The signature table doubles as it fills; the name cache is made on first use, as large as the
// input calls for (a trace of a few KB has few names, and zeroing the full cache for it cost
// more than parsing it).
TraceBuilder::TraceBuilder(Trace& trace) : trace_(trace) {
  sig_slots_.resize(16);
}

void TraceBuilder::ReserveForBytes(size_t input_bytes) {
  // Reserved but untouched capacity costs address space, not memory.
  if (input_bytes > 0) trace_.events.Reserve(input_bytes / 64 + 16);
  if (input_bytes > 0 && name_cache_.empty())
    name_cache_size_ = std::clamp<size_t>(std::bit_ceil(input_bytes / 64), 64, kNameCacheSize);
}

Status TraceBuilder::AddMetadata(std::string key, std::string_view json) {
  if (key == "baseTimeNanoseconds") {
    int64_t base = 0;
    auto r = std::from_chars(json.data(), json.data() + json.size(), base);
    if (r.ec != std::errc() || r.ptr != json.data() + json.size()) {
      return Error{"\"baseTimeNanoseconds\" must be an integer"};
    }
    trace_.origin_ns = base;
    trace_.has_origin = true;
    return Status::Ok();
  }
  std::string compact;
  json::AppendMinified(json, &compact);
  trace_.metadata.emplace_back(std::move(key), std::move(compact));
  return Status::Ok();
}

void TraceBuilder::BeginArgs() {
  pending_.clear();
  text_.clear();
}

void TraceBuilder::AddArg(std::string_view key, bool top_level, const ArgValue& value,
                          std::string_view text, bool inline_value) {
  PendingArg a;
  a.value = value;
  a.inline_value = inline_value;
  a.top_level = top_level;
  a.key_offset = static_cast<uint32_t>(text_.size());
  a.key_size = static_cast<uint32_t>(key.size());
  text_.append(key);
  a.text_offset = static_cast<uint32_t>(text_.size());
  a.text_size = static_cast<uint32_t>(text.size());
  text_.append(text);
  pending_.push_back(a);
}

uint32_t TraceBuilder::BuildSchema() {
  schema_scratch_.clear();
  for (const PendingArg& a : pending_) {
    SchemaField f;
    f.key = trace_.strings.Intern(std::string_view(text_).substr(a.key_offset, a.key_size));
    f.top_level = a.top_level;
    f.inline_value = a.inline_value;
    f.value = a.value;
    std::string_view text(text_.data() + a.text_offset, a.text_size);
    if (a.value.type == ArgType::kString) {
      f.value.str = trace_.strings.Intern(text);
    } else if (a.value.type == ArgType::kJson) {
      minify_buf_.clear();
      json::AppendMinified(text, &minify_buf_);
      f.value.str = trace_.strings.Intern(minify_buf_);
    }
    schema_scratch_.push_back(f);
  }
  return trace_.args.AddSchema(schema_scratch_);
}

namespace {
template <typename T>
void AppendPod(std::vector<char>* out, T v) {
  const char* p = reinterpret_cast<const char*>(&v);
  out->insert(out->end(), p, p + sizeof(T));
}
template <typename T>
T ReadPod(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
}  // namespace

bool TraceBuilder::SignatureEquals(const SigSlot& slot, const ArgSignature& s) const {
  const char* p = sig_bytes_.data() + slot.offset;
  if (ReadPod<uint32_t>(p) != s.pieces_.size()) return false;
  p += 4;
  for (std::string_view piece : s.pieces_) {
    if (ReadPod<uint32_t>(p) != piece.size()) return false;
    p += 4;
    if (std::memcmp(p, piece.data(), piece.size()) != 0) return false;
    p += piece.size();
  }
  if (ReadPod<uint32_t>(p) != s.types_.size()) return false;
  p += 4;
  return s.types_.empty() || std::memcmp(p, s.types_.data(), s.types_.size()) == 0;
}

std::optional<uint32_t> TraceBuilder::FindSchema(const ArgSignature& signature,
                                                 uint64_t hash) const {
  size_t mask = sig_slots_.size() - 1;
  for (size_t pos = hash & mask; sig_slots_[pos].used; pos = (pos + 1) & mask) {
    const SigSlot& slot = sig_slots_[pos];
    if (slot.hash == hash && SignatureEquals(slot, signature)) return slot.schema;
  }
  return std::nullopt;
}

void TraceBuilder::RememberSchema(const ArgSignature& signature, uint64_t hash, uint32_t schema) {
  if ((sig_count_ + 1) * 2 > sig_slots_.size()) {
    std::vector<SigSlot> bigger(sig_slots_.size() * 2);
    size_t m = bigger.size() - 1;
    for (const SigSlot& s : sig_slots_) {
      if (!s.used) continue;
      size_t q = s.hash & m;
      while (bigger[q].used) q = (q + 1) & m;
      bigger[q] = s;
    }
    sig_slots_.swap(bigger);
  }
  size_t mask = sig_slots_.size() - 1;
  size_t pos = hash & mask;
  while (sig_slots_[pos].used) pos = (pos + 1) & mask;
  SigSlot& slot = sig_slots_[pos];
  slot.used = true;
  slot.hash = hash;
  slot.offset = static_cast<uint32_t>(sig_bytes_.size());
  slot.schema = schema;
  AppendPod<uint32_t>(&sig_bytes_, static_cast<uint32_t>(signature.pieces_.size()));
  for (std::string_view piece : signature.pieces_) {
    AppendPod<uint32_t>(&sig_bytes_, static_cast<uint32_t>(piece.size()));
    sig_bytes_.insert(sig_bytes_.end(), piece.begin(), piece.end());
  }
  AppendPod<uint32_t>(&sig_bytes_, static_cast<uint32_t>(signature.types_.size()));
  sig_bytes_.insert(sig_bytes_.end(), signature.types_.begin(), signature.types_.end());
  slot.size = static_cast<uint32_t>(sig_bytes_.size() - slot.offset);
  ++sig_count_;
}

uint32_t TraceBuilder::InternName(std::string_view name) {
  uint64_t probe = name.size() * 0x9E3779B97F4A7C15ULL;
  if (name.size() >= 8) {
    uint64_t head, tail;
    std::memcpy(&head, name.data(), 8);
    std::memcpy(&tail, name.data() + name.size() - 8, 8);
    probe ^= head * 0xC2B2AE3D27D4EB4FULL ^ tail;
  } else {
    for (char c : name) probe = probe * 131 + static_cast<unsigned char>(c);
  }
  if (name_cache_.empty()) name_cache_.resize(name_cache_size_);
  NameSlot& slot = name_cache_[(probe ^ (probe >> 29)) & (name_cache_.size() - 1)];
  if (slot.size == name.size() && trace_.strings.Get(slot.id) == name) return slot.id;
  uint32_t id = trace_.strings.Intern(name);
  slot.id = id;
  slot.size = static_cast<uint32_t>(name.size());
  return id;
}

uint32_t TraceBuilder::TemplateOf(const EventFields& e, uint32_t schema) {
  uint16_t category = 0;
  if (!e.category.empty()) {
    if (has_last_category_ && e.category == last_category_) {
      category = last_category_index_;
    } else {
      category = trace_.InternCategory(e.category);
      last_category_.assign(e.category);
      last_category_index_ = category;
      has_last_category_ = true;
    }
  }
  uint32_t track;
  if (has_last_track_ && e.pid == last_pid_ && e.tid == last_tid_) {
    track = last_track_;
  } else {
    track = trace_.InternTrack(e.pid, e.tid);
    last_pid_ = e.pid;
    last_tid_ = e.tid;
    last_track_ = track;
    has_last_track_ = true;
  }
  if (e.phase == 'B' || e.phase == 'E') has_begin_end_ = true;
  return trace_.events.InternTemplate(
      EventTemplate{InternName(e.name), track, EventTable::PackKind(e.phase, category, e.flags),
                    schema == kNoArgs ? 0 : schema + 1});
}

uint64_t TraceBuilder::InputIndex(uint64_t event) const {
  uint64_t input = event;
  for (uint64_t dropped : dropped_inputs_) {
    if (dropped > input) break;
    ++input;
  }
  return input;
}

// Perfetto's rule (SliceTracker::End): an 'E' ends the innermost open 'B' of its thread with the
// same name and category, where the 'E' gives them; begins still open above that one end with
// it. Events of one thread are taken by time, those at the same time in file order.
void TraceBuilder::MatchBeginEnd() {
  EventTable& ev = trace_.events;
  const size_t n = ev.size();
  std::vector<uint32_t> order;
  for (size_t i = 0; i < n; ++i) {
    char ph = ev.phase(i);
    if (ph == 'B' || ph == 'E') order.push_back(static_cast<uint32_t>(i));
  }
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (ev.track(a) != ev.track(b)) return ev.track(a) < ev.track(b);
    return ev.ts(a) < ev.ts(b);
  });
  int64_t trace_end = 0;
  for (size_t i = 0; i < n; ++i) trace_end = std::max(trace_end, ev.end(i));
  std::vector<bool> drop(n, false);
  std::vector<uint32_t> open;
  std::vector<LongDuration> durations;  // set together at the end: one sort, not one insert each
  uint32_t current_track = UINT32_MAX;
  auto end_at = [&](uint32_t b, int64_t ts) {
    ev.SetPhase(b, 'X');
    durations.push_back(LongDuration{b, ts - ev.ts(b)});
  };
  auto close_open = [&] {
    for (uint32_t b : open) {
      end_at(b, trace_end);
      ev.AddFlags(b, kFlagUnterminated);
      repairs_.Note(Repair::kUnterminatedBegin, ImportRepairs::Place::kEvent, InputIndex(b));
    }
    open.clear();
  };
  for (uint32_t i : order) {
    if (ev.track(i) != current_track) {
      close_open();
      current_track = ev.track(i);
    }
    if (ev.phase(i) == 'B') {
      open.push_back(i);
      continue;
    }
    drop[i] = true;
    const uint32_t name = ev.name(i);
    const uint16_t category = ev.category(i);
    const bool any_name = name == 0;  // string id 0: the empty string
    size_t k = open.size();
    while (k > 0 && !((any_name || ev.name(open[k - 1]) == name) &&
                      (category == 0 || ev.category(open[k - 1]) == category))) {
      --k;
    }
    if (k == 0) {
      repairs_.Note(Repair::kUnmatchedEnd, ImportRepairs::Place::kEvent, InputIndex(i));
      continue;
    }
    if (k < open.size()) {
      repairs_.Note(Repair::kMisplacedEnd, ImportRepairs::Place::kEvent, InputIndex(i));
    }
    while (open.size() >= k) {
      end_at(open.back(), ev.ts(i));
      open.pop_back();
    }
  }
  close_open();
  ev.SetDurations(durations);
  ev.Compact(drop);
}

Status TraceBuilder::Finish() {
  if (has_begin_end_) MatchBeginEnd();
  repairs_.Publish(trace_);
  trace_.RebuildDerived();
  // What the columns reserved or outgrew while they filled is not the trace's to keep.
  trace_.events.ReleaseUnusedCapacity();
  trace_.args.ReleaseUnusedCapacity();
  TrimLargeBlockCache();
  return Status::Ok();
}

}  // namespace profsh
