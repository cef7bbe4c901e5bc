#include "engine/analysis/flight/step_triggers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace profsh {

namespace {

double Percentile(const std::vector<int64_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double rank = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return static_cast<double>(sorted[lo]) +
         (rank - static_cast<double>(lo)) * static_cast<double>(sorted[hi] - sorted[lo]);
}

std::string Ms(double ns) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
  return buf;
}

std::string Fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// A number after "NAME:" (or `fallback` when there is none), with an optional '%'.
Result<double> Parameter(const std::string& spec, size_t name_length, double fallback,
                         bool percent) {
  if (spec.size() == name_length) return fallback;
  if (spec[name_length] != ':')
    return Error{"--trigger " + spec +
                 ": unknown trigger (slow-step[:FACTOR], memory-growth[:N%], "
                 "gpu-idle[:N%], range:NAME>MS, or a Lua expression)"};
  std::string text = spec.substr(name_length + 1);
  if (percent && !text.empty() && text.back() == '%') text.pop_back();
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v > 0) || !std::isfinite(v))
    return Error{"--trigger " + spec + ": '" + spec.substr(name_length + 1) +
                 "' is not a positive number"};
  return v;
}

class SlowStep final : public StepTrigger {
 public:
  SlowStep(std::string spec, double factor) : spec_(std::move(spec)), factor_(factor) {}
  const std::string& spec() const override { return spec_; }
  Result<std::optional<std::string>> Check(const StepSummary& step,
                                           const StepHistory& history) override {
    if (history.count < kSlowStepMinHistory || history.median_ns <= 0) return NotTriggered();
    const double ratio = static_cast<double>(step.duration_ns) / history.median_ns;
    if (ratio <= factor_) return NotTriggered();
    return std::optional<std::string>(
        "slow-step: step " + std::to_string(step.step) + " took " +
        Ms(static_cast<double>(step.duration_ns)) + ", " + Fixed(ratio, 2) + "x the median " +
        Ms(history.median_ns) + " of the " + std::to_string(history.count) + " steps before it");
  }

 private:
  std::string spec_;
  double factor_;
};

// Memory in use at a step's end above the lowest of the history's (or the level it last fired
// at) by more than the given share: a leak fires once per such rise, steady use never.
class MemoryGrowth final : public StepTrigger {
 public:
  MemoryGrowth(std::string spec, double percent) : spec_(std::move(spec)), percent_(percent) {}
  const std::string& spec() const override { return spec_; }
  Result<std::optional<std::string>> Check(const StepSummary& step,
                                           const StepHistory& history) override {
    if (!step.has_memory || step.memory_growth <= 0 || history.count == 0) return NotTriggered();
    int64_t reference = INT64_MAX;
    for (const StepSummary& s : *history.steps) reference = std::min(reference, s.memory_at_end());
    if (fired_level_) reference = std::max(reference, *fired_level_);
    const int64_t end = step.memory_at_end();
    const double bound =
        static_cast<double>(std::max<int64_t>(reference, 0)) * (1 + percent_ / 100);
    if (static_cast<double>(end) <= bound) return NotTriggered();
    fired_level_ = end;
    return std::optional<std::string>(
        "memory-growth: " + std::to_string(end) + " bytes in use after step " +
        std::to_string(step.step) + ", " +
        (reference > 0 ? Fixed(100.0 * static_cast<double>(end - reference) / reference, 1) + "%"
                       : std::string("up")) +
        " from " + std::to_string(reference) + " (more than " + Fixed(percent_, 1) + "%)");
  }

 private:
  std::string spec_;
  double percent_;
  std::optional<int64_t> fired_level_;
};

class GpuIdle final : public StepTrigger {
 public:
  GpuIdle(std::string spec, double percent) : spec_(std::move(spec)), percent_(percent) {}
  const std::string& spec() const override { return spec_; }
  Result<std::optional<std::string>> Check(const StepSummary& step, const StepHistory&) override {
    if (!step.has_gpu || step.gpu_idle_fraction * 100 <= percent_) return NotTriggered();
    return std::optional<std::string>(
        "gpu-idle: the GPU was idle " + Fixed(step.gpu_idle_fraction * 100, 1) + "% of step " +
        std::to_string(step.step) + " (more than " + Fixed(percent_, 1) + "%)");
  }

 private:
  std::string spec_;
  double percent_;
};

class RangeLonger final : public StepTrigger {
 public:
  RangeLonger(std::string spec, std::string name, double ms)
      : spec_(std::move(spec)), name_(std::move(name)), ms_(ms) {}
  const std::string& spec() const override { return spec_; }
  Result<std::optional<std::string>> Check(const StepSummary& step, const StepHistory&) override {
    const int64_t ns = step.RangeTime(name_);
    if (static_cast<double>(ns) <= ms_ * 1e6) return NotTriggered();
    return std::optional<std::string>("range: '" + name_ + "' took " + Ms(static_cast<double>(ns)) +
                                      " in step " + std::to_string(step.step) + " (more than " +
                                      Fixed(ms_, 3) + " ms)");
  }

 private:
  std::string spec_, name_;
  double ms_;
};

bool Named(const std::string& spec, const char* name) {
  const std::string n = name;
  return spec.compare(0, n.size(), n) == 0 && (spec.size() == n.size() || spec[n.size()] == ':');
}

}  // namespace

StepHistory MakeStepHistory(const std::deque<StepSummary>& steps) {
  StepHistory h;
  h.steps = &steps;
  h.count = steps.size();
  if (steps.empty()) return h;
  std::vector<int64_t> d;
  d.reserve(steps.size());
  double sum = 0;
  for (const StepSummary& s : steps) {
    d.push_back(s.duration_ns);
    sum += static_cast<double>(s.duration_ns);
  }
  std::sort(d.begin(), d.end());
  h.min_ns = d.front();
  h.max_ns = d.back();
  h.mean_ns = sum / static_cast<double>(d.size());
  h.median_ns = Percentile(d, 0.5);
  h.p90_ns = Percentile(d, 0.9);
  h.p95_ns = Percentile(d, 0.95);
  h.p99_ns = Percentile(d, 0.99);
  return h;
}

bool IsBuiltInTrigger(const std::string& spec) {
  return Named(spec, "slow-step") || Named(spec, "memory-growth") || Named(spec, "gpu-idle") ||
         spec.compare(0, 6, "range:") == 0;
}

Result<std::unique_ptr<StepTrigger>> MakeBuiltInTrigger(const std::string& spec) {
  auto make = [&](const char* name, double fallback, bool percent,
                  auto build) -> Result<std::unique_ptr<StepTrigger>> {
    auto v = Parameter(spec, std::string(name).size(), fallback, percent);
    if (!v.ok()) return v.error();
    return std::unique_ptr<StepTrigger>(build(v.value()));
  };
  if (Named(spec, "slow-step"))
    return make("slow-step", 1.5, false, [&](double f) { return new SlowStep(spec, f); });
  if (Named(spec, "memory-growth"))
    return make("memory-growth", 10, true, [&](double p) { return new MemoryGrowth(spec, p); });
  if (Named(spec, "gpu-idle"))
    return make("gpu-idle", 30, true, [&](double p) { return new GpuIdle(spec, p); });
  if (spec.compare(0, 6, "range:") == 0) {
    const size_t gt = spec.rfind('>');
    if (gt == std::string::npos || gt <= 6)
      return Error{"--trigger " + spec + ": a range trigger is range:NAME>MS"};
    const std::string name = spec.substr(6, gt - 6), ms_text = spec.substr(gt + 1);
    char* end = nullptr;
    const double ms = std::strtod(ms_text.c_str(), &end);
    if (ms_text.empty() || *end != '\0' || !(ms >= 0) || !std::isfinite(ms))
      return Error{"--trigger " + spec + ": '" + ms_text + "' is not a number of milliseconds"};
    return std::unique_ptr<StepTrigger>(new RangeLonger(spec, name, ms));
  }
  return Error{"--trigger " + spec + ": not a built-in trigger"};
}

}  // namespace profsh
