// torch's export_stacks(path, metric): one line per operator event that has a stack and a
// positive metric, "outermost;...;innermost <integer microseconds>", with spaces, semicolons,
// tabs and newlines inside a frame replaced by '_'. Lines are not merged (flamegraph tools do).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/analysis/function_events.h"
#include "engine/exporters/exporter.h"

namespace profsh {

namespace {

class StacksExporter final : public Exporter {
 public:
  std::string_view name() const override { return "stacks"; }

  Status Write(const Trace& trace, const ExportOptions& options, AtomicWriter& out) const override {
    auto it = options.find("metric");
    std::string metric = it == options.end() ? "self_cpu_time_total" : it->second;
    bool cuda;
    if (metric == "self_cpu_time_total") {
      cuda = false;
    } else if (metric == "self_cuda_time_total" || metric == "self_device_time_total") {
      cuda = true;
    } else {
      return Error{
          "metric should be one of: ['self_cpu_time_total', 'self_cuda_time_total'], got '" +
          metric + "'"};
    }
    auto events = BuildFunctionEvents(trace);
    // torch writes them in its event order: by (start, -end), input order for ties.
    std::vector<uint32_t> order;
    for (uint32_t i = 0; i < events->size(); ++i) {
      if (!events->removed(i)) order.push_back(i);
    }
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      if (events->start_ns(a) != events->start_ns(b))
        return events->start_ns(a) < events->start_ns(b);
      if (events->end_ns(a) != events->end_ns(b)) return events->end_ns(a) > events->end_ns(b);
      return events->rank(a) < events->rank(b);
    });
    std::string line;
    for (uint32_t i : order) {
      const auto& frames = events->stacks.Get(events->stack(i));
      if (frames.empty()) continue;
      int64_t ns = cuda ? events->self_cuda_ns(i) : events->self_cpu_ns(i);
      auto value = static_cast<int64_t>(std::trunc(static_cast<double>(ns) / 1000.0));
      if (value <= 0) continue;
      line.clear();
      for (size_t f = frames.size(); f-- > 0;) {
        for (char c : events->strings.Get(frames[f])) {
          line.push_back((c == ' ' || c == ';' || c == '\t' || c == '\n') ? '_' : c);
        }
        line.push_back(';');
      }
      line.back() = ' ';
      line += std::to_string(value);
      line.push_back('\n');
      out.Write(line);
    }
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<Exporter> MakeStacksExporter() {
  return std::make_unique<StacksExporter>();
}

}  // namespace profsh
