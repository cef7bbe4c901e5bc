// Folded stacks, the input of flamegraphs: one line per stack, "outer;...;inner COUNT", as
// flamegraph.pl's stackcollapse scripts, inferno and torch's export_stacks write them. A second
// count column makes a differential profile (difffolded's "stack BEFORE AFTER").
//
// Frames are interned once and stacks kept as runs of 32-bit frame ids in one flat array, so a
// million stacks of twenty frames take about 100 MB whatever the length of their names, and the
// text is streamed, never held whole.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/io/input_source.h"
#include "engine/util/result.h"
#include "engine/util/string_pool.h"

namespace profsh {

class FoldedStacks {
 public:
  // Parses folded text; an input without a single stack line is an error naming `name`.
  static Result<FoldedStacks> Parse(std::string_view text, const std::string& name);
  // Streams a file (plain or gzip-compressed).
  static Result<FoldedStacks> Load(const std::string& path);
  // A differential profile: the stacks of both, each with its before and after value. With
  // `normalize`, before-values are scaled so that both profiles have the same total.
  static FoldedStacks Difference(const FoldedStacks& before, const FoldedStacks& after,
                                 bool normalize);

  explicit FoldedStacks(std::string name = {}) : name_(std::move(name)) {}

  // Adds one stack (frames outermost first) with its value, and for differential profiles its
  // before-value.
  void Add(std::span<const std::string_view> frames, double count, double before = 0);

  // Orders stacks frame by frame, whole frame names compared as strings (so "f" sorts before
  // "f.x" and a frame's children stay together), and merges equal stacks: the result does not
  // depend on the order or repetition of input lines.
  void Sort();

  size_t size() const { return counts_.size(); }
  std::span<const uint32_t> frames(size_t stack) const {
    return {frame_ids_.data() + begins_[stack], frame_ids_.data() + begins_[stack + 1]};
  }
  double count(size_t stack) const { return counts_[stack]; }
  double before(size_t stack) const { return befores_.empty() ? 0 : befores_[stack]; }
  std::string_view frame_name(uint32_t id) const { return names_.Get(id); }
  uint32_t frame_name_count() const { return names_.size(); }

  bool differential() const { return differential_; }
  size_t ignored_lines() const { return ignored_; }
  const std::string& name() const { return name_; }
  double total() const;

 private:
  void AddLine(std::string_view line);
  uint32_t InternFrame(std::string_view frame);
  std::vector<uint32_t> SortedOrder(const std::vector<uint32_t>& rank) const;

  std::string name_;
  StringPool names_;
  std::vector<uint32_t> frame_ids_;
  std::vector<uint64_t> begins_{0};  // stack i's frames are frame_ids_[begins_[i] .. begins_[i+1])
  std::vector<double> counts_;
  std::vector<double> befores_;  // empty unless differential
  bool differential_ = false;
  size_t ignored_ = 0;
};

}  // namespace profsh
