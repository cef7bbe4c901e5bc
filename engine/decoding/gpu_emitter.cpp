#include "engine/decoding/gpu_emitter.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <tuple>

#include "engine/decoding/cuda_call_filter.h"
#include "engine/decoding/kineto_emitter.h"
#include "engine/symbols/demangle.h"
#include "engine/trace/kineto_schema.h"

namespace profsh {

namespace st = stream;

namespace {

constexpr uint64_t kObjectThread = 2;  // CUPTI_ACTIVITY_OBJECT_THREAD

// Kineto's words for CUPTI's enums (CuptiActivity's memcpy and memory kind strings).
std::string_view CopyKindText(uint64_t kind) {
  static constexpr std::string_view kText[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                               "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
  return kind < std::size(kText) ? kText[kind] : "Unknown";
}
std::string_view MemoryKindText(uint64_t kind) {
  static constexpr std::string_view kText[] = {"Unknown",       "Pageable",      "Pinned",
                                               "Device",        "Array",         "Managed",
                                               "Device Static", "Managed Static"};
  return kind < std::size(kText) ? kText[kind] : "Unknown";
}
// Kineto's names (cupti_strings.cpp) for the kinds it knows; Kineto calls the later ones
// "Unrecognized", profsh names them after CUPTI's enumerators.
std::string_view OverheadText(uint64_t kind) {
  if (kind == 0) return "Unknown";
  if (kind == 1) return "Driver Compiler";
  // CUPTI's own overheads: CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH (1 << 16) and on.
  static constexpr std::string_view kCupti[] = {"Buffer Flush",
                                                "Instrumentation",
                                                "Resource",
                                                "Runtime Triggered Module Loading",
                                                "Lazy Function Loading",
                                                "Command Buffer Full",
                                                "Activity Buffer Request",
                                                "UVM Activity Init"};
  const uint64_t i = (kind >> 16) - 1;
  return kind % (1 << 16) == 0 && i < std::size(kCupti) ? kCupti[i] : "Unrecognized";
}

// CUPTI's synchronization types, from 1.
std::string_view SyncText(uint64_t type) {
  static constexpr std::string_view kText[] = {"Unknown Sync", "Event Sync", "Stream Wait Event",
                                               "Stream Sync", "Context Sync"};
  return type < std::size(kText) ? kText[type] : kText[0];
}

// Bytes per ns are GB/s.
double Bandwidth(uint64_t bytes, int64_t dur_ns) {
  return dur_ns > 0 ? static_cast<double>(bytes) / static_cast<double>(dur_ns) : 0.0;
}

// The arguments a copy and a set both carry, as Kineto writes them (the inline ones are
// GpuEmitter::TransferWords').
template <typename Transfer>
void AddTransferArgs(TraceBuilder& b, const Transfer& r) {
  b.AddInlineArg(kineto::kExternalId, ArgType::kInt);
  b.AddIntArg(kineto::kDevice, static_cast<int64_t>(r.device));
  b.AddIntArg("context", static_cast<int64_t>(r.context));
  b.AddIntArg("stream", static_cast<int64_t>(r.stream));
  b.AddInlineArg(kineto::kCorrelation, ArgType::kInt);
  b.AddInlineArg("bytes", ArgType::kInt);
  b.AddInlineArg(kineto::kMemoryBandwidth, ArgType::kDouble);
}

// Built with append: gcc 12 warns falsely (-Wrestrict) on chains of + with to_string.
std::string JsonTriple(uint64_t x, uint64_t y, uint64_t z) {
  std::string s = "[";
  s.append(std::to_string(x)).append(", ").append(std::to_string(y)).append(", ");
  s.append(std::to_string(z)).append("]");
  return s;
}

// A schema cache key: a tag and the values the schema fixes.
std::string Key(char tag, std::initializer_list<uint64_t> values) {
  std::string s(1, tag);
  for (uint64_t v : values) s.append(std::to_string(v)).append(",");
  return s;
}

}  // namespace

// --- occupancy ---

int64_t EstimatedOccupancy(const st::GpuKernel& k, const st::GpuDevice& d) {
  const uint64_t sms = d.sms, max_warps = d.max_warps_per_sm;
  const uint64_t threads = k.block_x * k.block_y * k.block_z;
  if (sms == 0 || max_warps == 0 || threads == 0) return 0;
  const uint64_t warps_per_block = (threads + 31) / 32;
  uint64_t resident = std::min<uint64_t>(d.max_blocks_per_sm ? d.max_blocks_per_sm : UINT64_MAX,
                                         max_warps / warps_per_block);
  if (const uint64_t regs = k.registers_per_thread; regs > 0 && d.registers_per_sm > 0) {
    const uint64_t per_warp = (regs * 32 + 255) / 256 * 256;
    resident = std::min(resident, d.registers_per_sm / (per_warp * warps_per_block));
  }
  if (const uint64_t shared = k.static_shared + k.dynamic_shared;
      shared > 0 && d.shared_memory_per_sm > 0)
    resident = std::min(resident, d.shared_memory_per_sm / shared);
  const double blocks_per_sm =
      static_cast<double>(k.grid_x * k.grid_y * k.grid_z) / static_cast<double>(sms);
  const double active = std::min(blocks_per_sm, static_cast<double>(resident));
  const double occupancy =
      active * static_cast<double>(warps_per_block) / static_cast<double>(max_warps) * 100.0;
  return std::llround(std::min(occupancy, 100.0));
}

// --- emission ---

template <typename Transfer>
void GpuEmitter::TransferWords(const Transfer& r) {
  words_.clear();
  PushInlineInt(words_, Id(r.correlation));
  PushInlineInt(words_, Id(r.correlation));
  PushInlineInt(words_, static_cast<int64_t>(r.bytes));
  PushInlineDouble(words_, Bandwidth(r.bytes, clock_.ToNs(r.end) - clock_.ToNs(r.start)));
}

uint32_t GpuEmitter::Schema(Output& o, TraceBuilder& b, const std::string& key, auto&& build) {
  auto [it, added] = o.schemas.try_emplace(key, 0);
  if (added) {
    b.BeginArgs();
    build();
    it->second = b.BuildSchema();
  }
  return it->second;
}

void GpuEmitter::Add(TraceBuilder& b, int64_t origin, char phase, uint64_t begin, uint64_t end,
                     std::string_view name, std::string_view category, Ident pid, Ident tid,
                     uint32_t schema) {
  EventFields e;
  e.phase = phase;
  e.ts = clock_.ToNs(begin) - origin;
  e.dur = phase == 'X' ? clock_.ToNs(end) - clock_.ToNs(begin) : 0;
  e.name = name;
  e.category = category;
  e.pid = pid;
  e.tid = tid;
  b.AddEvent(e, schema, words_);
}

void GpuEmitter::Record(size_t window, const st::GpuRecord& r, const GpuLaunch* launch) {
  int64_t origin = 0;
  TraceBuilder* b = cpu_.Builder(window, &origin);
  if (b == nullptr) return;
  Output& o = outputs_[window];
  st::VisitGpuRecord(r, [&](const auto& rec) {
    using Record = std::decay_t<decltype(rec)>;
    // Descriptions (devices, contexts) and counts are not events of a window.
    if constexpr (requires { Emit(o, *b, origin, rec, launch); }) {
      Emit(o, *b, origin, rec, launch);
    }
    if constexpr (st::DeviceWorkGpuRecord<Record>) {
      o.work.push_back(DeviceWork{rec.start, rec.end, rec.device, rec.stream, rec.correlation});
      o.tracks[{rec.device, rec.stream}] = true;
    }
  });
}

void GpuEmitter::Emit(Output& o, TraceBuilder& b, int64_t origin, const st::GpuKernel& r,
                      const GpuLaunch*) {
  ++counts.kernels;
  const uint64_t shared = r.static_shared + r.dynamic_shared;
  const auto dev = devices_.find(r.device);
  const uint64_t sms = dev != devices_.end() ? dev->second.sms : 0;
  const uint64_t blocks = r.grid_x * r.grid_y * r.grid_z;
  const uint64_t warps = blocks * ((r.block_x * r.block_y * r.block_z + 31) / 32);
  const int64_t occupancy = dev != devices_.end() ? EstimatedOccupancy(r, dev->second) : 0;
  // Everything but the correlation is fixed per launch shape: one schema per shape.
  const std::string key =
      Key('k', {r.device, r.context, r.stream, r.registers_per_thread, shared, r.grid_x, r.grid_y,
                r.grid_z, r.block_x, r.block_y, r.block_z, sms, r.graph});
  const uint32_t schema = Schema(o, b, key, [&] {
    b.AddInlineArg(kineto::kExternalId, ArgType::kInt);
    b.AddIntArg("queued", 0);
    b.AddIntArg(kineto::kDevice, static_cast<int64_t>(r.device));
    b.AddIntArg("context", static_cast<int64_t>(r.context));
    b.AddIntArg("stream", static_cast<int64_t>(r.stream));
    b.AddInlineArg(kineto::kCorrelation, ArgType::kInt);
    b.AddIntArg("registers per thread", static_cast<int64_t>(r.registers_per_thread));
    b.AddIntArg("shared memory", static_cast<int64_t>(shared));
    if (sms > 0) {
      b.AddDoubleArg("blocks per SM", static_cast<double>(blocks) / static_cast<double>(sms));
      b.AddDoubleArg("warps per SM", static_cast<double>(warps) / static_cast<double>(sms));
    }
    b.AddJsonArg("grid", JsonTriple(r.grid_x, r.grid_y, r.grid_z));
    b.AddJsonArg("block", JsonTriple(r.block_x, r.block_y, r.block_z));
    if (sms > 0) b.AddIntArg("est. achieved occupancy %", occupancy);
    if (r.graph != 0) {
      b.AddIntArg("graph id", static_cast<int64_t>(r.graph));
      b.AddInlineArg("graph node id", ArgType::kInt);
    }
  });
  words_.clear();
  PushInlineInt(words_, Id(r.correlation));
  PushInlineInt(words_, Id(r.correlation));
  if (r.graph != 0) PushInlineInt(words_, static_cast<int64_t>(r.graph_node));
  Add(b, origin, 'X', r.start, r.end, KernelName(r.name), kineto::kKernel, DevicePid(r.device),
      Ident{static_cast<int64_t>(r.stream), 0, false}, schema);
}

void GpuEmitter::Emit(Output& o, TraceBuilder& b, int64_t origin, const st::GpuMemcpy& r,
                      const GpuLaunch*) {
  ++counts.copies;
  const bool peer = r.copy_kind == 10;
  const std::string key = Key('c', {r.device, r.context, r.stream, r.copy_kind,
                                    peer ? r.src_device : 0, peer ? r.dst_device : 0});
  const uint32_t schema = Schema(o, b, key, [&] {
    AddTransferArgs(b, r);
    b.AddStringArg("copy kind", CopyKindText(r.copy_kind));
    if (peer) {
      b.AddIntArg("src device", static_cast<int64_t>(r.src_device));
      b.AddIntArg("dst device", static_cast<int64_t>(r.dst_device));
    }
  });
  TransferWords(r);
  std::string name = "Memcpy ";
  name.append(CopyKindText(r.copy_kind)).append(" (").append(MemoryKindText(r.src_kind));
  name.append(" -> ").append(MemoryKindText(r.dst_kind)).append(")");
  Add(b, origin, 'X', r.start, r.end, name, kineto::kGpuMemcpy, DevicePid(r.device),
      Ident{static_cast<int64_t>(r.stream), 0, false}, schema);
}

void GpuEmitter::Emit(Output& o, TraceBuilder& b, int64_t origin, const st::GpuMemset& r,
                      const GpuLaunch*) {
  ++counts.sets;
  const std::string key = Key('s', {r.device, r.context, r.stream});
  const uint32_t schema = Schema(o, b, key, [&] { AddTransferArgs(b, r); });
  TransferWords(r);
  std::string name = "Memset (";
  name.append(MemoryKindText(r.memory_kind)).append(")");
  Add(b, origin, 'X', r.start, r.end, name, kineto::kGpuMemset, DevicePid(r.device),
      Ident{static_cast<int64_t>(r.stream), 0, false}, schema);
}

void GpuEmitter::Emit(Output& o, TraceBuilder& b, int64_t origin, const st::GpuApi& r,
                      const GpuLaunch*) {
  auto [left_out, added] = calls_left_out_.try_emplace(r.name);
  if (added)
    left_out->second = KinetoLeavesOutCall(r.api == st::kGpuApiRuntime, names_.Text(r.name));
  if (left_out->second) {
    ++counts.calls_left_out;
    return;
  }
  ++counts.calls;
  const uint32_t schema = Schema(o, b, Key('a', {r.cbid}), [&] {
    b.AddInlineArg(kineto::kExternalId, ArgType::kInt);
    b.AddIntArg("cbid", static_cast<int64_t>(r.cbid));
    b.AddInlineArg(kineto::kCorrelation, ArgType::kInt);
  });
  words_.clear();
  PushInlineInt(words_, Id(r.correlation));
  PushInlineInt(words_, Id(r.correlation));
  const int64_t tid = static_cast<int64_t>(r.tid);
  Add(b, origin, 'X', r.start, r.end, names_.Text(r.name),
      r.api == st::kGpuApiRuntime ? kineto::kCudaRuntime : kineto::kCudaDriver,
      Ident{pid_, 0, false}, Ident{tid, 0, false}, schema);
  o.launch_of[r.correlation] = {tid, r.start};
}

void GpuEmitter::CudaEventRecorded(const st::GpuCudaEvent& e) {
  std::vector<EventRecord>& records = event_records_[{e.context, e.event}];
  auto at = std::lower_bound(
      records.begin(), records.end(), e.correlation,
      [](const EventRecord& r, uint64_t correlation) { return r.correlation < correlation; });
  records.insert(at, EventRecord{e.correlation, e.stream});
  latest_event_record_ = std::max(latest_event_record_, e.correlation);
  // Records reach the emitter before the syncs that wait for them (a whole CUPTI buffer, or a
  // live release, ahead), so an event recorded every iteration may have many records here that
  // syncs still ask for: records are forgotten by age, not by count. An event's records over a
  // million calls older than the newest record are never asked for, nor are events created and
  // destroyed in a loop (a pool's) whose last record is that old.
  constexpr uint64_t kForgetAfterCalls = uint64_t{1} << 20;
  const uint64_t horizon =
      latest_event_record_ > kForgetAfterCalls ? latest_event_record_ - kForgetAfterCalls : 0;
  auto old = std::lower_bound(
      records.begin(), records.end(), horizon,
      [](const EventRecord& r, uint64_t correlation) { return r.correlation < correlation; });
  if (old != records.begin() && old != records.end()) records.erase(records.begin(), old);
  if (++event_records_added_ % 4096 == 0 && horizon > 0) {
    std::erase_if(event_records_,
                  [&](const auto& entry) { return entry.second.back().correlation < horizon; });
  }
}

const GpuEmitter::EventRecord* GpuEmitter::EventRecordBefore(uint64_t context, uint64_t event,
                                                             uint64_t correlation) const {
  auto it = event_records_.find({context, event});
  if (it == event_records_.end()) return nullptr;
  const std::vector<EventRecord>& records = it->second;
  auto after = std::upper_bound(records.begin(), records.end(), correlation,
                                [](uint64_t c, const EventRecord& r) { return c < r.correlation; });
  return after == records.begin() ? nullptr : &*std::prev(after);
}

void GpuEmitter::Emit(Output& o, TraceBuilder& b, int64_t origin, const st::GpuSync& r,
                      const GpuLaunch*) {
  ++counts.syncs;
  const uint64_t device = DeviceOf(r.context);
  const std::string_view name = SyncText(r.type);
  // Kineto's isEventSync: these name the event they wait for, and the record it waits for.
  constexpr uint64_t kEventSynchronize = 1, kStreamWaitEvent = 2;
  const bool event_sync = r.type == kEventSynchronize || r.type == kStreamWaitEvent;
  const std::string key = Key('y', {r.type, r.context, r.stream});
  const uint32_t schema = Schema(o, b, key, [&] {
    b.AddInlineArg(kineto::kExternalId, ArgType::kInt);
    b.AddStringArg("cuda_sync_kind", name);
    if (event_sync) {
      b.AddInlineArg(kineto::kWaitOnStream, ArgType::kInt);
      b.AddInlineArg(kineto::kWaitOnEventRecordCorrelation, ArgType::kInt);
      b.AddInlineArg(kineto::kWaitOnEventId, ArgType::kInt);
    }
    b.AddIntArg("stream", static_cast<int64_t>(r.stream));
    b.AddInlineArg(kineto::kCorrelation, ArgType::kInt);
    b.AddIntArg(kineto::kDevice, static_cast<int64_t>(device));
    b.AddIntArg("context", static_cast<int64_t>(r.context));
  });
  words_.clear();
  PushInlineInt(words_, Id(r.correlation));
  if (event_sync) {
    // -1 where the record is not known (recorded before profiling began), as Kineto writes.
    const EventRecord* waited = EventRecordBefore(r.context, r.event, r.correlation);
    PushInlineInt(words_, waited ? static_cast<int64_t>(waited->stream) : -1);
    PushInlineInt(words_, waited ? Id(waited->correlation) : -1);
    PushInlineInt(words_, static_cast<int64_t>(r.event));
  }
  PushInlineInt(words_, Id(r.correlation));
  Add(b, origin, 'X', r.start, r.end, name, "cuda_sync", DevicePid(device),
      Ident{static_cast<int64_t>(r.stream), 0, false}, schema);
  o.tracks[{device, r.stream}] = true;
}

// CUPTI's own time, Kineto's "overhead" events. Kineto puts them all on pid -1, tid 0; profsh
// puts them in the process, on the thread CUPTI names when it names one (else tid 0).
void GpuEmitter::Emit(Output& o, TraceBuilder& b, int64_t origin, const st::GpuOverhead& r,
                      const GpuLaunch*) {
  ++counts.overheads;
  const uint32_t schema = Schema(o, b, Key('o', {}), [] {});
  words_.clear();
  const int64_t tid = r.object_kind == kObjectThread ? static_cast<int64_t>(r.thread) : 0;
  Add(b, origin, 'X', r.start, r.end, OverheadText(r.overhead_kind), "overhead",
      Ident{pid_, 0, false}, Ident{tid, 0, false}, schema);
}

// torch's [memory] instant with the device (Device Type 1: CUDA), on the thread whose call
// allocated or freed, so that the operator view counts it for the range open there.
void GpuEmitter::Emit(Output& o, TraceBuilder& b, int64_t origin, const st::GpuMemory& r,
                      const GpuLaunch* launch) {
  ++counts.memory;
  const uint64_t device = r.device;
  const bool freed = r.operation == 2;
  const int64_t bytes = freed ? -static_cast<int64_t>(r.bytes) : static_cast<int64_t>(r.bytes);
  int64_t& total = memory_total_[device];  // one running total per device, across windows
  total += bytes;
  const uint32_t schema = Schema(o, b, Key('m', {device}), [&] {
    b.AddInlineArg(kineto::kTotalAllocated, ArgType::kInt);
    b.AddInlineArg(kineto::kBytes, ArgType::kInt);
    b.AddInlineArg(kineto::kAddr, ArgType::kInt);
    b.AddIntArg(kineto::kDeviceType, 1);
    b.AddIntArg(kineto::kDeviceId, static_cast<int64_t>(device));
  });
  words_.clear();
  PushInlineInt(words_, total);
  PushInlineInt(words_, bytes);
  PushInlineInt(words_, static_cast<int64_t>(r.address));
  const int64_t tid = launch ? launch->tid : pid_;
  Add(b, origin, 'i', r.time, r.time, kineto::kMemoryEvent, kineto::kCpuInstantEvent,
      Ident{pid_, 0, false}, Ident{tid, 0, false}, schema);
}

// CUPTI gives a kernel's linkage name; Kineto writes it demangled (libkineto's demangle(),
// which leaves names over 8192 characters as they are), and torch's tables, HTA and the
// TensorBoard plugin group by that text. Only "_Z" names are demangled: Kineto would also turn
// an extern "C" kernel named "f" into "float".
const std::string& GpuEmitter::KernelName(uint32_t name) {
  auto [it, added] = kernel_names_.try_emplace(name);
  if (added) {
    constexpr size_t kKinetoMaxSymbolSize = 8192;
    const std::string text(names_.Text(name));
    it->second = text.size() > kKinetoMaxSymbolSize ? text : symbols::Demangle(text.c_str());
  }
  return it->second;
}

void GpuEmitter::Range(size_t window, int64_t tid, uint64_t begin, uint64_t end, uint32_t name) {
  outputs_[window].ranges.push_back(CpuRange{tid, begin, end, name});
}

// The device-side span of each CPU range: from the first start to the last end of the work
// launched inside it (at any depth), per device and stream, as Kineto's gpu_user_annotation.
void GpuEmitter::Projections(Output& o, TraceBuilder& b, int64_t origin) {
  if (o.work.empty() || o.ranges.empty()) return;
  struct Launched {
    int64_t tid;
    uint64_t at;
    size_t work;
  };
  std::vector<Launched> launched;
  for (size_t i = 0; i < o.work.size(); ++i) {
    auto it = o.launch_of.find(o.work[i].correlation);
    if (it != o.launch_of.end()) launched.push_back({it->second.first, it->second.second, i});
  }
  std::sort(launched.begin(), launched.end(), [](const Launched& a, const Launched& c) {
    return a.tid != c.tid ? a.tid < c.tid : a.at < c.at;
  });
  std::vector<CpuRange>& ranges = o.ranges;
  std::sort(ranges.begin(), ranges.end(), [](const CpuRange& a, const CpuRange& c) {
    if (a.tid != c.tid) return a.tid < c.tid;
    return a.begin != c.begin ? a.begin < c.begin : a.end > c.end;
  });
  // (range, device, stream) -> [first start, last end]
  std::map<std::tuple<size_t, uint64_t, uint64_t>, std::pair<uint64_t, uint64_t>> spans;
  std::vector<size_t> open;
  size_t next = 0;
  int64_t current_tid = INT64_MIN;
  for (const Launched& l : launched) {
    if (l.tid != current_tid) {
      current_tid = l.tid;
      open.clear();
      while (next < ranges.size() && ranges[next].tid < l.tid) ++next;
    }
    while (next < ranges.size() && ranges[next].tid == l.tid && ranges[next].begin <= l.at) {
      while (!open.empty() && ranges[open.back()].end <= ranges[next].begin) open.pop_back();
      open.push_back(next++);
    }
    while (!open.empty() && ranges[open.back()].end <= l.at) open.pop_back();
    const DeviceWork& w = o.work[l.work];
    for (size_t r : open) {
      if (ranges[r].end <= l.at) continue;  // a sibling closed before, below an open parent
      auto [it, added] = spans.try_emplace({r, w.device, w.stream}, w.begin, w.end);
      if (!added) {
        it->second.first = std::min(it->second.first, w.begin);
        it->second.second = std::max(it->second.second, w.end);
      }
    }
  }
  const uint32_t schema = TraceBuilder::kNoArgs;
  words_.clear();
  for (const auto& [key, span] : spans) {
    const auto& [range, device, stream] = key;
    Add(b, origin, 'X', span.first, span.second, names_.Text(ranges[range].name),
        kineto::kGpuUserAnnotation, DevicePid(device),
        Ident{static_cast<int64_t>(stream), 0, false}, schema);
  }
}

// ac2g: from each launch call to its device work, as Kineto links them.
void GpuEmitter::Flows(Output& o, TraceBuilder& b, int64_t origin) {
  if (o.work.empty()) return;
  const auto [start_schema, finish_schema] = BuildFlowSchemas(b);
  std::map<uint64_t, bool> started;
  for (const DeviceWork& w : o.work) {
    auto it = o.launch_of.find(w.correlation);
    if (it == o.launch_of.end()) continue;
    words_.clear();
    PushInlineInt(words_, Id(w.correlation));
    if (!started[w.correlation]) {
      Add(b, origin, 's', it->second.second, it->second.second, kineto::kAc2g, kineto::kAc2g,
          Ident{pid_, 0, false}, Ident{it->second.first, 0, false}, start_schema);
      started[w.correlation] = true;
    }
    Add(b, origin, 'f', w.begin, w.begin, kineto::kAc2g, kineto::kAc2g, DevicePid(w.device),
        Ident{static_cast<int64_t>(w.stream), 0, false}, finish_schema);
  }
}

void GpuEmitter::Seal(size_t window, std::string_view rank) {
  auto found = outputs_.find(window);
  int64_t origin = 0;
  TraceBuilder* b = cpu_.Builder(window, &origin);
  if (found == outputs_.end() || b == nullptr) {
    if (found != outputs_.end()) outputs_.erase(found);
    return;
  }
  Output& o = found->second;
  Projections(o, *b, origin);
  Flows(o, *b, origin);
  // Names of the devices and their streams (Kineto's "GPU N" processes, "stream N" threads).
  std::map<uint64_t, bool> named;
  for (const auto& [track, unused] : o.tracks) {
    const auto [device, stream] = track;
    auto meta = [&](std::string_view what, int64_t tid, std::string_view key,
                    std::string_view value) {
      b->BeginArgs();
      b->AddStringArg(key, value);
      const uint32_t schema = b->BuildSchema();
      EventFields e;
      e.phase = 'M';
      e.name = what;
      e.pid = DevicePid(device);
      e.tid = Ident{tid, 0, false};
      b->AddEvent(e, schema, {});
    };
    if (!named[device]) {
      named[device] = true;
      // Kineto's "GPU N"; a stream after the first also names its process, and a process of a
      // rank labels its devices with the rank, as its own process (engine/analysis/ranks).
      std::string gpu = std::string("GPU ").append(std::to_string(device));
      std::string labels = gpu;
      if (stream_base_ != 0) gpu.append(" (pid ").append(std::to_string(pid_)).append(")");
      if (!rank.empty()) labels.append(", rank ").append(rank);
      meta(kineto::kProcessName, 0, kineto::kMetaName, gpu);
      meta(kineto::kProcessLabels, 0, kineto::kMetaLabels, labels);
    }
    meta(kineto::kThreadName, static_cast<int64_t>(stream), kineto::kMetaName,
         std::string("stream ").append(std::to_string(stream)));
  }
  if (!devices_.empty() && !o.tracks.empty()) {
    std::string json = "[";
    for (const auto& [id, d] : devices_) {
      if (json.size() > 1) json += ", ";
      std::string name;
      for (char c : names_.Text(d.name)) {
        if (c == '"' || c == '\\') name += '\\';
        if (static_cast<unsigned char>(c) >= 0x20) name += c;
      }
      auto field = [&](const char* key, uint64_t v) {
        json.append(", \"").append(key).append("\": ").append(std::to_string(v));
      };
      json.append("{\"id\": ").append(std::to_string(id));
      json.append(", \"name\": \"").append(name).append("\"");
      field("totalGlobalMem", d.global_memory);
      field("computeMajor", d.cc_major);
      field("computeMinor", d.cc_minor);
      field("maxThreadsPerBlock", d.max_threads_per_block);
      field("maxThreadsPerMultiprocessor", d.max_warps_per_sm * 32);
      field("regsPerMultiprocessor", d.registers_per_sm);
      field("warpSize", 32);
      field("sharedMemPerMultiprocessor", d.shared_memory_per_sm);
      field("numSms", d.sms);
      json.append("}");
    }
    json += "]";
    b->AddMetadata("deviceProperties", json);
  }
  outputs_.erase(found);
}

void GpuEmitter::Forget(int window) {
  for (auto it = launches_.begin(); it != launches_.end();) {
    if (it->second.window >= 0 && it->second.window <= window) {
      it = launches_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace profsh
