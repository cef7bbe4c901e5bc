#include "engine/flamegraph/folded_stacks.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <numeric>

namespace profsh {

namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}
bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

// The trailing count of "STACK COUNT": digits with an optional fraction, after whitespace (the
// grammar flamegraph.pl accepts). Returns false when the text does not end that way.
bool SplitCount(std::string_view text, std::string_view* stack, double* count) {
  size_t end = text.size();
  while (end > 0 && IsSpace(text[end - 1])) --end;
  size_t begin = end;
  int dots = 0;
  while (begin > 0 && (IsDigit(text[begin - 1]) || text[begin - 1] == '.')) {
    dots += text[begin - 1] == '.';
    --begin;
  }
  if (begin == end || !IsDigit(text[begin]) || dots > 1) return false;
  if (begin == 0 || !IsSpace(text[begin - 1])) return false;
  auto r = std::from_chars(text.data() + begin, text.data() + end, *count);
  if (r.ec != std::errc()) return false;
  size_t stack_end = begin;
  while (stack_end > 0 && IsSpace(text[stack_end - 1])) --stack_end;
  *stack = text.substr(0, stack_end);
  return true;
}

constexpr size_t kReleaseEvery = 8 << 20;

Error NoStacks(const FoldedStacks& s) {
  return Error{s.name() + ": no stack lines (expected lines of the form \"outer;...;inner COUNT\"" +
               (s.ignored_lines() > 0
                    ? ", " + std::to_string(s.ignored_lines()) + " lines did not match"
                    : std::string()) +
               ")"};
}

}  // namespace

uint32_t FoldedStacks::InternFrame(std::string_view frame) {
  return names_.Intern(frame);
}

void FoldedStacks::Add(std::span<const std::string_view> frames, double count, double before) {
  for (std::string_view f : frames) frame_ids_.push_back(InternFrame(f));
  begins_.push_back(frame_ids_.size());
  counts_.push_back(count);
  if (before != 0 && !differential_) {
    differential_ = true;
    befores_.assign(counts_.size() - 1, 0.0);
  }
  if (differential_) befores_.push_back(before);
}

void FoldedStacks::AddLine(std::string_view line) {
  while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) return;
  std::string_view stack;
  double count;
  if (!SplitCount(line, &stack, &count)) {
    ++ignored_;
    return;
  }
  double before = 0;
  std::string_view inner;
  double first;
  if (SplitCount(stack, &inner, &first)) {
    // "STACK BEFORE AFTER": widths come from the second value, colours from the change.
    stack = inner;
    before = first;
    if (!differential_) {
      differential_ = true;
      befores_.assign(counts_.size(), 0.0);
    }
  }
  if (!stack.empty()) {
    size_t pos = 0;
    while (true) {
      size_t semi = stack.find(';', pos);
      if (semi == std::string_view::npos) {
        frame_ids_.push_back(InternFrame(stack.substr(pos)));
        break;
      }
      frame_ids_.push_back(InternFrame(stack.substr(pos, semi - pos)));
      pos = semi + 1;
    }
  }
  begins_.push_back(frame_ids_.size());
  counts_.push_back(count);
  if (differential_) befores_.push_back(before);
}

Result<FoldedStacks> FoldedStacks::Parse(std::string_view text, const std::string& name) {
  FoldedStacks s(name);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    s.AddLine(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  if (s.size() == 0) return NoStacks(s);
  return s;
}

Result<FoldedStacks> FoldedStacks::Load(const std::string& path) {
  auto opened = OpenInput(path);
  if (!opened.ok()) return opened.error();
  InputSource& input = *opened.value();
  FoldedStacks s(path);
  std::string_view whole = input.WholeContent();
  if (!whole.empty()) {
    size_t pos = 0, released = 0;
    while (pos < whole.size()) {
      size_t nl = whole.find('\n', pos);
      if (nl == std::string_view::npos) nl = whole.size();
      s.AddLine(whole.substr(pos, nl - pos));
      pos = nl + 1;
      if (pos - released >= kReleaseEvery) {
        input.ReleaseBefore(pos);
        released = pos;
      }
    }
  } else {
    std::vector<char> chunk(1 << 20);
    std::string carry;  // a line split across chunks
    while (true) {
      auto n = input.Read(chunk.data(), chunk.size());
      if (!n.ok()) return n.error();
      if (n.value() == 0) break;
      std::string_view data(chunk.data(), n.value());
      size_t pos = 0;
      while (true) {
        size_t nl = data.find('\n', pos);
        if (nl == std::string_view::npos) break;
        if (carry.empty()) {
          s.AddLine(data.substr(pos, nl - pos));
        } else {
          carry.append(data.substr(pos, nl - pos));
          s.AddLine(carry);
          carry.clear();
        }
        pos = nl + 1;
      }
      carry.append(data.substr(pos));
    }
    if (!carry.empty()) s.AddLine(carry);
  }
  if (s.size() == 0) return NoStacks(s);
  return s;
}

// Most-significant-digit radix order: each pass packs the ranks of the next few frames (plus one,
// so that 0 marks a stack's end and sorts first) into a 64-bit key and sorts on it; only stacks
// that tie on every packed frame go on to the next pass. The first pass reads the frames in
// storage order, and comparisons never chase frame arrays, which is what makes a million
// stacks sort in a fraction of a second.
std::vector<uint32_t> FoldedStacks::SortedOrder(const std::vector<uint32_t>& rank) const {
  struct Keyed {
    uint64_t key;
    uint32_t stack;
  };
  const int bits = std::bit_width(static_cast<uint64_t>(rank.size()) + 1);
  const size_t per_key = static_cast<size_t>(64 / bits);
  const uint64_t last_slot = (uint64_t{1} << bits) - 1;
  std::vector<Keyed> keyed(size());
  for (uint32_t i = 0; i < keyed.size(); ++i) keyed[i].stack = i;
  struct Range {
    size_t lo, hi, depth;
  };
  std::vector<Range> pending{{0, keyed.size(), 0}};
  while (!pending.empty()) {
    Range r = pending.back();
    pending.pop_back();
    for (size_t i = r.lo; i < r.hi; ++i) {
      auto f = frames(keyed[i].stack);
      uint64_t key = 0;
      for (size_t j = r.depth; j < r.depth + per_key; ++j) {
        key = (key << bits) | (j < f.size() ? rank[f[j]] + 1 : 0);
      }
      keyed[i].key = key;
    }
    std::sort(keyed.begin() + r.lo, keyed.begin() + r.hi,
              [](const Keyed& a, const Keyed& b) { return a.key < b.key; });
    for (size_t i = r.lo; i < r.hi;) {
      size_t j = i + 1;
      while (j < r.hi && keyed[j].key == keyed[i].key) ++j;
      // Equal keys whose last slot is a frame may still differ further down.
      if (j - i > 1 && (keyed[i].key & last_slot) != 0)
        pending.push_back({i, j, r.depth + per_key});
      i = j;
    }
  }
  std::vector<uint32_t> order(keyed.size());
  for (size_t i = 0; i < keyed.size(); ++i) order[i] = keyed[i].stack;
  return order;
}

void FoldedStacks::Sort() {
  // Rank frame ids by name once; stacks then compare as sequences of ranks.
  std::vector<uint32_t> by_name(names_.size());
  std::iota(by_name.begin(), by_name.end(), 0u);
  std::sort(by_name.begin(), by_name.end(),
            [&](uint32_t a, uint32_t b) { return names_.Get(a) < names_.Get(b); });
  std::vector<uint32_t> rank(names_.size());
  for (uint32_t r = 0; r < by_name.size(); ++r) rank[by_name[r]] = r;
  by_name = {};

  std::vector<uint32_t> order = SortedOrder(rank);
  std::vector<uint32_t> ids;
  ids.reserve(frame_ids_.size());
  std::vector<uint64_t> begins{0};
  std::vector<double> counts, befores;
  counts.reserve(size());
  begins.reserve(size() + 1);
  if (differential_) befores.reserve(size());
  for (uint32_t i : order) {
    auto f = frames(i);
    size_t last = counts.size();
    if (last > 0 && std::equal(f.begin(), f.end(), ids.begin() + begins[last - 1], ids.end())) {
      counts[last - 1] += counts_[i];
      if (differential_) befores[last - 1] += befores_[i];
      continue;
    }
    ids.insert(ids.end(), f.begin(), f.end());
    begins.push_back(ids.size());
    counts.push_back(counts_[i]);
    if (differential_) befores.push_back(befores_[i]);
  }
  frame_ids_ = std::move(ids);
  begins_ = std::move(begins);
  counts_ = std::move(counts);
  befores_ = std::move(befores);
}

double FoldedStacks::total() const {
  return std::accumulate(counts_.begin(), counts_.end(), 0.0);
}

FoldedStacks FoldedStacks::Difference(const FoldedStacks& before, const FoldedStacks& after,
                                      bool normalize) {
  double scale = 1;
  if (normalize) {
    double tb = before.total(), ta = after.total();
    if (tb > 0) scale = ta / tb;
  }
  FoldedStacks d(before.name_ + " -> " + after.name_);
  d.differential_ = true;
  std::vector<std::string_view> names;
  auto add = [&](const FoldedStacks& from, bool is_before) {
    for (size_t i = 0; i < from.size(); ++i) {
      names.clear();
      for (uint32_t id : from.frames(i)) names.push_back(from.frame_name(id));
      if (is_before) {
        d.Add(names, 0, from.count(i) * scale);
      } else {
        d.Add(names, from.count(i), 0);
      }
    }
  };
  add(before, true);
  add(after, false);
  d.Sort();  // equal stacks of the two profiles become one, with both values
  return d;
}

}  // namespace profsh
