#include "engine/session/hang_trace.h"

#include "engine/trace/trace_builder.h"
#include "engine/util/json_text.h"

namespace profsh {

std::unique_ptr<Trace> HangTrace(const HangFinding& hang, int64_t pid, int64_t origin_ns) {
  auto trace = std::make_unique<Trace>();
  trace->origin_ns = origin_ns;
  trace->has_origin = true;
  TraceBuilder b(*trace);
  b.SetFormat("profsh-session");
  for (const ProcessHangState& p : hang.processes) {
    if (p.pid != pid) continue;
    for (const OpenRangeNow& r : p.open) {
      EventFields e;
      e.phase = 'X';
      e.ts = r.begin_ns - origin_ns;
      e.dur = hang.at_ns - r.begin_ns;
      e.name = r.name;
      e.category = kHangCategory;
      e.pid = Ident{p.pid, 0, false};
      e.tid = Ident{r.tid, 0, false};
      e.flags = kFlagUnterminated;
      b.BeginArgs();
      b.AddStringArg("kind", r.kind);
      for (const CollectiveEntered& c : p.collectives) {
        if (c.open && c.tid == r.tid && c.begin_ns == r.begin_ns && c.name == r.name) {
          b.AddIntArg("seq", c.seq);
          b.AddIntArg("seq_recorded", c.seq_recorded ? 1 : 0);
        }
      }
      b.AddEvent(e, b.BuildSchema(), {});
    }
  }
  std::string meta = "{\"pid\": " + std::to_string(pid) + ", \"reason\": ";
  AppendJsonString(&meta, hang.reason);
  meta += ", \"hang\": " + HangReportJson(hang.processes, hang.at_ns) + "}";
  b.AddMetadata("profsh", meta);
  b.Finish();
  trace->source_path = "hang of pid " + std::to_string(pid);
  return trace;
}

}  // namespace profsh
