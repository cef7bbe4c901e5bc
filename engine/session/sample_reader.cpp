#include "engine/session/sample_reader.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <unordered_map>

#include "engine/io/input_source.h"
#include "engine/stream/sample_codec.h"
#include "engine/symbols/address_space.h"
#include "engine/symbols/stack_snapshot.h"
#include "engine/symbols/symbolizer.h"
#include "engine/symbols/unwinder.h"

namespace profsh {

namespace {

namespace st = stream;
namespace sym = symbols;

// A block of the file that happens at a time: replayed in time order, because the kernel's
// per-CPU buffers interleave them.
struct TimedBlock {
  uint64_t time = 0;
  uint32_t type = 0;
  std::string_view payload;
};

void Fold(const std::vector<std::string>& names, const std::vector<std::string>& modules,
          SampleStack& out) {
  out.stack.clear();
  out.modules.clear();
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) {
      out.stack += ';';
      out.modules += ';';
    }
    out.stack += names[i];
    out.modules += modules[i];
  }
  out.leaf = names.empty() ? std::string() : names.back();
}

std::string FrameText(std::string_view s) {
  std::string out(s);
  // ';' separates the frames of a folded stack; a name holding one (operator;) keeps a ':'.
  std::replace(out.begin(), out.end(), ';', ':');
  return out;
}

}  // namespace

struct SampleUnwinder::Impl {
  void Task(const st::SampleTaskBlock& t) {
    if (t.kind == st::kTaskFork && t.pid != t.parent_pid) {
      // A new process starts with its parent's mappings.
      auto parent = spaces_.find(t.parent_pid);
      spaces_[t.pid] = parent != spaces_.end() ? parent->second : sym::AddressSpace{};
    } else if (t.kind == st::kTaskExec) {
      spaces_[t.pid] = sym::AddressSpace{};
    }
    if (t.kind == st::kTaskExec) stacks_.erase(t.pid);
  }

  void Mapping(const st::SampleMappingBlock& m) {
    sym::Mapping mapping;
    mapping.start = m.start;
    mapping.end = m.start + m.length;
    mapping.file_offset = m.file_offset;
    mapping.path = std::string(m.path);
    mapping.build_id = std::string(m.build_id);
    mapping.executable = m.executable != 0;
    spaces_[m.pid].Add(std::move(mapping));
    // A new mapping may reuse addresses a cached stack named (dlclose, then dlopen).
    stacks_.erase(m.pid);
  }

  std::shared_ptr<const SampleStack> Stack(const st::SampleBlock& s) {
    sym::StackSnapshot snap;
    for (int r = 0; r < static_cast<int>(sym::X86Reg::kCount); ++r) {
      if ((s.regs_mask >> r) & 1) snap.regs[r] = s.decoded_regs[r];
    }
    snap.regs_mask = s.regs_mask;
    snap.stack =
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.stack.data()), s.stack.size());
    const sym::AddressSpace& space = spaces_[s.pid];
    frames_ = unwinder_.Unwind(space, snap);
    // The same return addresses in one process name the same stack.
    pcs_.clear();
    for (const sym::UnwoundFrame& f : frames_) pcs_.push_back(f.pc);
    auto& cache = stacks_[s.pid];
    const uint64_t key = Fnv1a(pcs_);
    auto it = cache.find(key);
    if (it != cache.end() && it->second.first == pcs_) return it->second.second;
    auto made = std::make_shared<SampleStack>();
    SampleStack& out = *made;
    for (const sym::UnwoundFrame& f : frames_) {
      for (const sym::SourceFrame& sf : symbolizer_.Symbolize(space, f.pc, f.is_return_address)) {
        out.names.push_back(FrameText(sf.function));
        out.module_names.push_back(FrameText(sf.module));
      }
    }
    if (out.names.empty()) {
      out.names.push_back("[unknown]");
      out.module_names.push_back("[unknown]");
    }
    std::reverse(out.names.begin(), out.names.end());
    std::reverse(out.module_names.begin(), out.module_names.end());
    for (const std::string& n : out.names) out.has_eval_loop |= IsEvalLoopFrame(n);
    Fold(out.names, out.module_names, out);
    cache[key] = {pcs_, made};
    return made;
  }

  const sym::SymbolizerStats& symbolizer_stats() const { return symbolizer_.stats(); }

  static uint64_t Fnv1a(const std::vector<uint64_t>& v) {
    uint64_t h = 1469598103934665603ull;
    for (uint64_t x : v) {
      h ^= x;
      h *= 1099511628211ull;
    }
    return h;
  }

  std::unordered_map<int64_t, sym::AddressSpace> spaces_;
  std::unordered_map<
      int64_t, std::unordered_map<
                   uint64_t, std::pair<std::vector<uint64_t>, std::shared_ptr<const SampleStack>>>>
      stacks_;
  sym::Unwinder unwinder_;
  sym::Symbolizer symbolizer_;
  std::vector<sym::UnwoundFrame> frames_;
  std::vector<uint64_t> pcs_;
};

SampleUnwinder::SampleUnwinder() : impl_(std::make_unique<Impl>()) {}
SampleUnwinder::~SampleUnwinder() = default;
void SampleUnwinder::Task(const st::SampleTaskBlock& t) {
  impl_->Task(t);
}
void SampleUnwinder::Mapping(const st::SampleMappingBlock& m) {
  impl_->Mapping(m);
}
std::shared_ptr<const SampleStack> SampleUnwinder::Stack(const st::SampleBlock& s) {
  return impl_->Stack(s);
}
uint64_t SampleUnwinder::unnamed_frames() const {
  return impl_->symbolizer_stats().unnamed;
}

const std::vector<const std::string*>& OpenPythonCalls::At(int64_t pid, int64_t tid, int64_t ns) {
  frames_.clear();
  auto [it, added] = threads_.try_emplace({pid, tid});
  Thread& t = it->second;
  if (added) t.calls = calls_.Of(pid, tid);
  if (t.calls == nullptr) return frames_;
  const std::vector<PythonCalls::Call>& calls = *t.calls;
  while (t.next < calls.size() && calls[t.next].begin_ns <= ns) t.open.push_back(&calls[t.next++]);
  std::erase_if(t.open, [&](const PythonCalls::Call* c) { return c->end_ns <= ns; });
  for (const PythonCalls::Call* c : t.open) frames_.push_back(&calls_.name(c->name));
  return frames_;
}

void SampleEventWriter::Add(const SampleStack& native,
                            const std::vector<const std::string*>& python, int64_t pid, int64_t tid,
                            int64_t ts, uint32_t weight, SessionSummary& summary) {
  const SampleStack* stack_of = &native;
  if (native.has_eval_loop && !python.empty() &&
      SpliceWithPython(native.names, native.module_names, python, spliced_.names,
                       spliced_.module_names)) {
    Fold(spliced_.names, spliced_.module_names, spliced_);
    stack_of = &spliced_;
    ++summary.samples_with_python;
  }
  const SampleStack& stack = *stack_of;
  const std::string key = stack.stack + '\n' + stack.modules;
  auto schema = schemas_.find(key);
  if (schema == schemas_.end()) {
    builder_.BeginArgs();
    builder_.AddStringArg("stack", stack.stack);
    builder_.AddStringArg("modules", stack.modules);
    builder_.AddInlineInt32Arg("weight");
    schema = schemas_.emplace(key, builder_.BuildSchema()).first;
  }
  EventFields e;
  e.phase = 'i';
  e.ts = ts;
  e.name = stack.leaf;
  e.category = kCpuSampleCategory;
  e.pid = Ident{pid, 0, false};
  e.tid = Ident{tid, 0, false};
  builder_.AddEvent(e, schema->second, std::span<const uint32_t>(&weight, 1));
  ++summary.cpu_samples;
}

bool SampleBlockTime(uint32_t type, std::string_view payload, uint64_t* time_ns) {
  // The time sits at a fixed place in each: after pid/tid fields (see sample_codec.h).
  if (type != st::kSampleTask && type != st::kSampleMapping && type != st::kSample) return false;
  const size_t at = type == st::kSampleTask ? 33 : type == st::kSampleMapping ? 8 : 16;
  if (payload.size() < at + 8) return false;
  std::memcpy(time_ns, payload.data() + at, 8);
  return true;
}

std::string SamplingMethodText(const st::SampleConfigBlock& c) {
  std::string m = c.method == st::kSamplePerfCycles     ? "perf_event_open (cycles)"
                  : c.method == st::kSamplePerfCpuClock ? "perf_event_open (cpu-clock)"
                  : c.method == st::kSampleTimer
                      ? "timer (CLOCK_THREAD_CPUTIME_ID, in the collector)"
                      : "none";
  m += " at " + std::to_string(c.rate_hz) + " Hz";
  if (!c.note.empty()) m += " (" + std::string(c.note) + ")";
  return m;
}

void PythonCalls::NoteSampleTimes(const std::string& path) {
  filtered_ = true;
  auto input = OpenInput(path);
  if (!input.ok()) return;  // ReadCpuSamples reports it
  std::string_view data = input.value()->WholeContent();
  st::FileHeader header{};
  if (data.size() < sizeof header) return;
  std::memcpy(&header, data.data(), sizeof header);
  if (std::memcmp(header.magic, st::kMagic, sizeof header.magic) != 0 ||
      header.header_size < sizeof header || header.header_size > data.size())
    return;
  int64_t mono_to_real = 0;
  bool have_clock = false;
  st::BlockIterator blocks(data, header.header_size);
  st::RawBlock b;
  while (blocks.Next(&b)) {
    st::Cursor c(b.payload);
    if (b.type == st::kClock && !have_clock) {
      st::ClockBlock clock;
      if (!clock.Decode(c)) return;
      mono_to_real = clock.realtime_ns - clock.monotonic_ns;
      have_clock = true;
    } else if (b.type == st::kSample && have_clock) {
      st::SampleBlock sample;
      if (!sample.Decode(c)) return;
      sample_times_[{sample.pid, sample.tid}].push_back(static_cast<int64_t>(sample.time_ns) +
                                                        mono_to_real);
    }
  }
  for (auto& [thread, times] : sample_times_) std::sort(times.begin(), times.end());
}

void PythonCalls::Add(int64_t pid, int64_t tid, int64_t begin_ns, int64_t end_ns,
                      std::string_view name) {
  if (filtered_) {
    auto t = sample_times_.find({pid, tid});
    if (t == sample_times_.end()) return;
    auto first = std::lower_bound(t->second.begin(), t->second.end(), begin_ns);
    if (first == t->second.end() || *first >= end_ns) return;  // no sample inside it
  }
  auto [it, added] = ids_.try_emplace(std::string(name), static_cast<uint32_t>(names_.size()));
  if (added) names_.push_back(FrameText(name));
  threads_[{pid, tid}].push_back(Call{begin_ns, end_ns, it->second});
}

void PythonCalls::Sort() {
  for (auto& [thread, calls] : threads_) {
    std::sort(calls.begin(), calls.end(), [](const Call& a, const Call& b) {
      return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.end_ns > b.end_ns;
    });
  }
}

const std::vector<PythonCalls::Call>* PythonCalls::Of(int64_t pid, int64_t tid) const {
  auto it = threads_.find({pid, tid});
  return it == threads_.end() ? nullptr : &it->second;
}

bool IsEvalLoopFrame(std::string_view f) {
  // CPython 3.11 to 3.13's eval loop; older ones named it the same (_PyEval_EvalFrameDefault).
  return f == "_PyEval_EvalFrameDefault" || f.starts_with("_PyEval_EvalFrameDefault.");
}

bool SpliceWithPython(const std::vector<std::string>& native,
                      const std::vector<std::string>& native_modules,
                      const std::vector<const std::string*>& python,
                      std::vector<std::string>& names, std::vector<std::string>& modules) {
  size_t loops = 0;
  for (const std::string& n : native) loops += IsEvalLoopFrame(n) ? 1 : 0;
  if (loops == 0) return false;
  names.clear();
  modules.clear();
  size_t next = 0, seen = 0;
  for (size_t i = 0; i < native.size(); ++i) {
    names.push_back(native[i]);
    modules.push_back(native_modules[i]);
    if (!IsEvalLoopFrame(native[i])) continue;
    const size_t take =
        ++seen < loops ? std::min<size_t>(1, python.size() - next) : python.size() - next;
    for (size_t k = 0; k < take; ++k, ++next) {
      names.push_back(*python[next]);
      modules.push_back(kPythonFrameModule);
    }
  }
  return true;
}

Status ReadCpuSamples(const std::string& path, int64_t origin_ns,
                      const std::vector<RecordingWindow>& windows, const PythonCalls& python,
                      TraceBuilder& builder, SessionSummary& summary,
                      std::vector<std::string>& warnings) {
  auto input = OpenInput(path);
  if (!input.ok()) return Status(input.error());
  std::string_view data = input.value()->WholeContent();
  st::FileHeader header{};
  if (data.size() < sizeof header) return Status(Error{path + ": too short for a samples file"});
  std::memcpy(&header, data.data(), sizeof header);
  if (std::memcmp(header.magic, st::kMagic, sizeof header.magic) != 0 ||
      header.header_size < sizeof header || header.header_size > data.size())
    return Status(Error{path + ": not a profsh samples file (bad header)"});

  int64_t mono_to_real = 0;
  bool have_clock = false;
  std::vector<TimedBlock> timed;
  st::BlockIterator blocks(data, header.header_size);
  st::RawBlock b;
  while (blocks.Next(&b)) {
    st::Cursor c(b.payload);
    switch (b.type) {
      case st::kClock: {
        st::ClockBlock clock;
        if (!clock.Decode(c)) return Status(Error{path + ": bad clock block"});
        if (!have_clock) mono_to_real = clock.realtime_ns - clock.monotonic_ns;
        have_clock = true;
        break;
      }
      case st::kSampleConfig: {
        st::SampleConfigBlock config;
        if (!config.Decode(c)) return Status(Error{path + ": bad sample configuration block"});
        summary.sampling_method = SamplingMethodText(config);
        break;
      }
      case st::kSampleDrops: {
        st::SampleDropsBlock drops;
        if (!drops.Decode(c)) return Status(Error{path + ": bad sample drops block"});
        summary.samples_lost += drops.lost + drops.dropped;
        break;
      }
      case st::kSampleTask:
      case st::kSampleMapping:
      case st::kSample: {
        uint64_t t;
        if (!SampleBlockTime(b.type, b.payload, &t))
          return Status(Error{path + ": bad sample block"});
        timed.push_back(TimedBlock{t, b.type, b.payload});
        break;
      }
      default:
        break;  // blocks of later versions
    }
  }
  if (blocks.has_partial_block())
    warnings.push_back(path + ": ends in a partial block (profsh was killed while writing)");
  if (!have_clock) return Status(Error{path + ": no clock block"});
  // Mappings and task changes first among equal times: a sample needs the mapping made before.
  std::stable_sort(timed.begin(), timed.end(), [](const TimedBlock& x, const TimedBlock& y) {
    if (x.time != y.time) return x.time < y.time;
    return (x.type == st::kSample) < (y.type == st::kSample);
  });
  std::map<int64_t, std::vector<const RecordingWindow*>> windows_of;
  for (const RecordingWindow& w : windows) windows_of[w.pid].push_back(&w);

  SampleUnwinder unwinder;
  OpenPythonCalls open_calls(python);
  SampleEventWriter writer(builder);
  static const std::vector<const std::string*> kNoPython;
  for (const TimedBlock& tb : timed) {
    st::Cursor c(tb.payload);
    if (tb.type == st::kSampleTask) {
      st::SampleTaskBlock t;
      if (!t.Decode(c)) return Status(Error{path + ": bad task block"});
      unwinder.Task(t);
    } else if (tb.type == st::kSampleMapping) {
      st::SampleMappingBlock m;
      if (!m.Decode(c)) return Status(Error{path + ": bad mapping block"});
      unwinder.Mapping(m);
    } else {
      st::SampleBlock s;
      if (!s.Decode(c)) return Status(Error{path + ": bad sample block"});
      const int64_t real = static_cast<int64_t>(s.time_ns) + mono_to_real;
      const int64_t ts = real - origin_ns;
      if (auto w = windows_of.find(s.pid); w != windows_of.end()) {
        bool inside = false;
        for (const RecordingWindow* r : w->second)
          inside |= r->whole_run || (ts >= r->begin_ns && ts <= r->end_ns);
        if (!inside) {
          ++summary.samples_outside_windows;
          continue;
        }
      }
      std::shared_ptr<const SampleStack> stack = unwinder.Stack(s);
      writer.Add(*stack, stack->has_eval_loop ? open_calls.At(s.pid, s.tid, real) : kNoPython,
                 s.pid, s.tid, ts, static_cast<uint32_t>(s.weight), summary);
    }
  }
  summary.sample_frames_unnamed += unwinder.unnamed_frames();
  return Status();
}

}  // namespace profsh
