// The pass over the events, the only one whose length is the trace's: in parallel parts, it
// counts the operators and memory records and lists the device work with its ids, then writes
// every column and offers each op or runtime call to the index of the ids device work wants.
// Everything per template was decided before (classify_templates), so the loops read one byte
// of template role per event and the inline words of its ids.
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

  // An id read straight from the event's inline words when the template keeps it there.
  const uint32_t* arena = trace_.args.arena().data();
  auto read_id = [this, arena](const TemplateInfo::Id& id, ArgRef args, Key key, bool* found) {
    if (id.words == 1) {
      *found = true;
      return static_cast<int64_t>(static_cast<int32_t>(arena[args.offset + id.word]));
    }
    if (id.words == 2) {
      *found = true;
      return static_cast<int64_t>(arena[args.offset + id.word] |
                                  static_cast<uint64_t>(arena[args.offset + id.word + 1]) << 32);
    }
    int64_t v = 0;
    *found = reader_.GetInt(args, key, &v);
    return v;
  };

  // First pass, over the template column: how many ops, and the device work with its ids. One
  // byte per template keeps the loop in the first-level cache: bit 0 an op, bit 1 device work,
  // bit 2 a memory record.
  std::vector<uint8_t> kind(templates.size(), 0);
  for (size_t t = 0; t < templates.size(); ++t) {
    const TemplateInfo& ti = info[t];
    kind[t] = ti.role == kOperator ? (ti.IsDeviceWork() ? 3 : 1) : ti.role == kIgnored ? 0 : 4;
  }
  const uint32_t* event_template = ev.template_column().data();
  if (any_itt_left_out_) {
    for (size_t i = 0; i < n; ++i) f_.itt_tasks_left_out += itt_left_out_[event_template[i]];
    std::sort(f_.itt_domains_left_out.begin(), f_.itt_domains_left_out.end());
    f_.itt_domains_left_out.erase(
        std::unique(f_.itt_domains_left_out.begin(), f_.itt_domains_left_out.end()),
        f_.itt_domains_left_out.end());
  }
  const size_t parts = PartsFor(n);
  // Each part counts its ops and records and lists its device work with part-local op
  // numbers; the offsets of the parts then make them global.
  std::vector<size_t> first_op(parts + 1, 0), first_record(parts + 1, 0);
  std::vector<LargeVector<DeviceLink>> part_links(parts);
  RunInParts(parts, [&](size_t part) {
    size_t ops = 0, records = 0;
    for (size_t i = PartBegin(n, part, parts), end = PartEnd(n, part, parts); i < end; ++i) {
      const uint8_t k = kind[event_template[i]];
      if (k == 3) {
        const TemplateInfo& ti = info[event_template[i]];
        DeviceLink d{static_cast<uint32_t>(ops), -1, -1, false, false};
        const ArgRef args = ev.args(i);
        if (!args.empty()) {
          d.external = read_id(ti.own_id, args, kExternal, &d.has_external);
          d.correlation = read_id(ti.correlation, args, kCorrelation, &d.has_correlation);
        }
        part_links[part].push_back(d);
      }
      ops += k & 1;
      records += k >> 2;
    }
    first_op[part + 1] = ops;
    first_record[part + 1] = records;
  });
  std::vector<size_t> first_link(parts + 1, 0);
  for (size_t p = 0; p < parts; ++p) {
    first_op[p + 1] += first_op[p];
    first_record[p + 1] += first_record[p];
    first_link[p + 1] = first_link[p] + part_links[p].size();
  }
  links_.resize(first_link[parts]);
  RunInParts(parts, [&](size_t part) {
    DeviceLink* out = links_.data() + first_link[part];
    const uint32_t op_offset = static_cast<uint32_t>(first_op[part]);
    for (DeviceLink d : part_links[part]) {
      d.candidate += op_offset;
      *out++ = d;
    }
    LargeVector<DeviceLink>().swap(part_links[part]);
  });
  const size_t m = first_op[parts], memory = first_record[parts];
  IdIndex op_by_external([&](auto&& f) {
    for (const DeviceLink& d : links_) {
      if (d.has_external) f(d.external);
    }
  });
  IdIndex runtime_by_correlation([&](auto&& f) {
    for (const DeviceLink& d : links_) {
      if (d.has_correlation) f(d.correlation);
    }
  });
  const bool linking = !links_.empty();

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

  // Second pass: the columns, and each op or runtime call offered to the index under its id.
  // Its parts write disjoint ranges of every column.
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
      if (ti.role == kIgnored) continue;
      if (ti.role != kOperator) {
        int64_t bytes = 0, device_type = 0;
        reader_.GetInt(ev.args(i), kBytes, &bytes);
        reader_.GetInt(ev.args(i), kDeviceType, &device_type);
        memory_[r++] = {ts[i], IsCpuMemoryDevice(device_type) ? bytes : 0,
                        IsCudaMemoryDevice(device_type) ? bytes : 0, templates[t].track,
                        ti.role == kOutOfMemory};
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
        if (linking) {
          bool found;
          if (ti.flags & FunctionEvents::kRuntime) {
            int64_t id = read_id(ti.own_id, args, kCorrelation, &found);
            if (found) runtime_by_correlation.Offer(id, static_cast<uint32_t>(c));
          } else {
            int64_t id = read_id(ti.own_id, args, kExternal, &found);
            if (found) op_by_external.Offer(id, static_cast<uint32_t>(c));
          }
        }
        if (want_stacks_) reader_.GetInt(args, kSequence, &seq_[c]);
        if (want_flops_) reader_.GetInt(args, kFlops, &f_.flops_[c]);
      }
      ++c;
    }
  });
  for (const MemoryRecord& r : memory_) f_.memory_records += !r.oom;
  if (linking) LinkDeviceWork(op_by_external, runtime_by_correlation);
}

}  // namespace profsh
