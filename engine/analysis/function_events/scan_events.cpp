// The pass over the events, the only one whose length is the trace's: in parallel parts, it
// counts the operators and memory records, then writes every column. Everything per template was
// decided before (classify_templates), so the loops read one byte of template role per event.
#include <algorithm>

#include "engine/analysis/function_events/builder.h"
#include "engine/util/parallel.h"

namespace profsh {

namespace {

bool IsCpuMemoryDevice(int64_t device_type) {
  return device_type == 0 || device_type == 2 || device_type == 5;  // c10: CPU, MKLDNN, IDEEP
}
bool IsCudaMemoryDevice(int64_t device_type) {
  return device_type == 1 || device_type == 6;  // CUDA, HIP
}

}  // namespace

void FunctionEventsBuilder::ScanEvents() {
  const EventTable& ev = trace_.events;
  const size_t n = ev.size();
  const auto& templates = ev.templates();
  const std::vector<TemplateInfo>& info = info_;

  // First pass, over the template column: how many ops and records. One byte per template
  // keeps the loop in the first-level cache: bit 0 an op, bit 2 a memory record.
  std::vector<uint8_t> kind(templates.size(), 0);
  for (size_t t = 0; t < templates.size(); ++t)
    kind[t] = info[t].joins ? 1 : info[t].memory ? 4 : 0;
  const uint32_t* event_template = ev.template_column().data();
  if (any_itt_left_out_) {
    for (size_t i = 0; i < n; ++i) f_.itt_tasks_left_out += itt_left_out_[event_template[i]];
    std::sort(f_.itt_domains_left_out.begin(), f_.itt_domains_left_out.end());
    f_.itt_domains_left_out.erase(
        std::unique(f_.itt_domains_left_out.begin(), f_.itt_domains_left_out.end()),
        f_.itt_domains_left_out.end());
  }
  const size_t parts = PartsFor(n);
  // Each part counts its ops and records; the offsets of the parts then place them.
  std::vector<size_t> first_op(parts + 1, 0), first_record(parts + 1, 0);
  RunInParts(parts, [&](size_t part) {
    size_t ops = 0, records = 0;
    for (size_t i = PartBegin(n, part, parts), end = PartEnd(n, part, parts); i < end; ++i) {
      const uint8_t k = kind[event_template[i]];
      ops += k & 1;
      records += k >> 2;
    }
    first_op[part + 1] = ops;
    first_record[part + 1] = records;
  });
  for (size_t p = 0; p < parts; ++p) {
    first_op[p + 1] += first_op[p];
    first_record[p + 1] += first_record[p];
  }
  const size_t m = first_op[parts], memory = first_record[parts];

  candidate_events_.resize(m);
  f_.flags_.resize(m);
  f_.start_.resize(m);
  f_.end_.resize(m);
  f_.name_.resize(m);
  f_.track_.resize(m);
  if (want_inputs_) f_.input_set_.resize(m);
  if (want_stacks_) {
    f_.stack_.resize(m);
    seq_.assign(m, -1);
  }
  if (want_flops_) f_.flops_.assign(m, 0);
  memory_.resize(memory);

  // Second pass: the columns. Its parts write disjoint ranges of every column.
  const int64_t* ts = ev.ts_column().data();
  const uint32_t* dur = ev.dur_column().data();
  // Raw column pointers: through the vectors, every store would make the compiler load each
  // vector's data pointer again.
  uint32_t* candidate_event = candidate_events_.data();
  uint8_t* flags = f_.flags_.data();
  int64_t* start = f_.start_.data();
  int64_t* finish = f_.end_.data();
  uint32_t* name = f_.name_.data();
  uint32_t* track = f_.track_.data();
  uint32_t* inputs = want_inputs_ ? f_.input_set_.data() : nullptr;
  uint32_t* stack = want_stacks_ ? f_.stack_.data() : nullptr;
  RunInParts(parts, [&](size_t part) {
    size_t c = first_op[part], r = first_record[part];
    for (size_t i = PartBegin(n, part, parts), end = PartEnd(n, part, parts); i < end; ++i) {
      const uint32_t t = event_template[i];
      const TemplateInfo& ti = info[t];
      if (!ti.joins && !ti.memory) continue;
      if (ti.memory) {
        int64_t bytes = 0, device_type = 0;
        args_.MemoryBytes(ev.args(i), &bytes);
        args_.MemoryDeviceType(ev.args(i), &device_type);
        memory_[r++] = {ts[i], IsCpuMemoryDevice(device_type) ? bytes : 0,
                        IsCudaMemoryDevice(device_type) ? bytes : 0, templates[t].track,
                        ti.out_of_memory};
        continue;
      }
      candidate_event[c] = static_cast<uint32_t>(i);
      flags[c] = ti.flags;
      start[c] = ts[i];
      finish[c] = ts[i] + (dur[i] != EventTable::kLongDuration ? dur[i] : ev.dur(i));
      name[c] = ti.name;
      track[c] = ti.track;
      if (inputs != nullptr) inputs[c] = ti.inputs;
      if (stack != nullptr) stack[c] = ti.stack;
      if (!(ti.flags & FunctionEvents::kDevice) && ti.has_args) {
        const ArgRef args = ev.args(i);
        if (want_stacks_) args_.SequenceNumber(args, &seq_[c]);
        if (want_flops_) args_.Flops(args, &f_.flops_[c]);
      }
      ++c;
    }
  });
  for (const MemoryRecord& r : memory_) f_.memory_records += !r.oom;
}

}  // namespace profsh
