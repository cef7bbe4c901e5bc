#include "repl/run_command.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/analysis/averages_table.h"
#include "engine/analysis/function_events.h"
#include "engine/session/on_demand.h"
#include "engine/session/recording.h"
#include "engine/exporters/exporter.h"
#include "engine/io/paths.h"

namespace profsh::repl {

namespace {

constexpr char kUsage[] =
    "usage: profsh run [options] [--] CMD [ARGS...]\n"
    "\n"
    "Runs CMD (and every process it starts) with profsh's collector injected, then prints the\n"
    "operators table of what the processes announced (NVTX ranges, ITT tasks) and saves the\n"
    "trace. The exit status is CMD's.\n"
    "\n"
    "options:\n"
    "  -o, --output PATH          save the trace here (default: profsh-DATE-TIME.profsh in the\n"
    "                             current folder; a .json or .json.gz name writes Chrome JSON)\n"
    "  --activities LIST          what to collect: nvtx,itt,torch (default: all)\n"
    "  --record-shapes            PyTorch operators' input shapes and types\n"
    "  --with-stack               PyTorch operators' Python stacks\n"
    "  --with-flops               FLOPs of the operators torch has formulas for\n"
    "  --profile-memory           allocations and frees, attributed to the innermost range\n"
    "  --sort-by KEY              the table's order (default: cpu_time_total)\n"
    "  --row-limit N              rows in the table (default: 25)\n"
    "  --group-by-input-shape     one row per operator and input shapes\n"
    "  --no-table                 print no table\n"
    "  --keep-session             keep the raw per-process streams (the folder is printed)\n"
    "  --buffer-kb N              per-thread event buffer (default: 8192)\n"
    "  --drain-ms N               how often buffers are written out, 1..100 (default: 20)\n"
    "\n"
    "long jobs (each window's table is printed, and its trace saved as BASE.PID.N.profsh, while\n"
    "the workload runs):\n"
    "  --schedule SPEC            torch's schedule, e.g. "
    "skip_first=10,wait=5,warmup=1,active=3,repeat=2\n"
    "  --step-marker PATTERN      Lua pattern of the ranges or marks that start a step\n"
    "                             (default: ^ProfilerStep#%d+)\n"
    "  --capture-range NAME       record only while a range of that name is open\n"
    "  --on-demand                record nothing until asked: profsh trace --pid PID --steps N\n";

// "skip_first=10,wait=5,warmup=1,active=3,repeat=2" (any subset; torch's defaults otherwise).
Result<Schedule> ParseSchedule(const std::string& spec) {
  Schedule s;
  size_t pos = 0;
  while (pos < spec.size()) {
    size_t comma = spec.find(',', pos);
    if (comma == std::string::npos) comma = spec.size();
    std::string item = spec.substr(pos, comma - pos);
    pos = comma + 1;
    size_t eq = item.find('=');
    if (eq == std::string::npos) return Error{"--schedule: '" + item + "' is not KEY=NUMBER"};
    std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    char* end = nullptr;
    long long v = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0')
      return Error{"--schedule: " + key + " needs a whole number, got '" + value + "'"};
    int64_t* field = s.Field(key);
    if (field == nullptr) {
      return Error{"--schedule: unknown key '" + key +
                   "' (skip_first, wait, warmup, active, repeat, skip_first_wait)"};
    }
    *field = v;
  }
  if (!s.Valid()) return Error{std::string("--schedule: ") + Schedule::kInvalidMessage};
  return s;
}

// BASE.PID.N.EXT for window N of process PID.
std::string WindowPath(const std::string& output, const WindowInfo& w) {
  std::string base = output, ext = ".profsh";
  for (const char* e : {".json.gz", ".json", ".profsh"}) {
    size_t n = std::strlen(e);
    if (base.size() > n && base.compare(base.size() - n, n, e) == 0) {
      ext = e;
      base.erase(base.size() - n);  // not resize(): gcc 12 warns falsely on its growth path
      break;
    }
  }
  return base + "." + std::to_string(w.pid) + "." + std::to_string(w.index) + ext;
}

bool EndsWith(const std::string& s, const char* suffix) {
  std::string t(suffix);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    if (comma == std::string::npos) comma = s.size();
    if (comma > pos) out.push_back(s.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return out;
}

}  // namespace

// Windows are reported while the workload runs: each one's table, and its trace saved.
int RunLive(LaunchOptions& launch, std::string output, const TableOptions& table,
            bool group_by_shape, bool print_table, bool keep_session) {
  if (output.empty()) output = NewTracePath("profsh");
  std::unique_ptr<OnDemandServer> server;
  LiveCallbacks callbacks;
  callbacks.started = [&](const std::string& session) {
    if (!launch.on_demand) return;
    auto s = OnDemandServer::Listen(session);
    if (!s.ok()) {
      std::fprintf(stderr, "profsh run: on-demand requests cannot be taken: %s\n",
                   s.error().message.c_str());
      return;
    }
    server = std::move(s.value());
    std::fprintf(
        stderr,
        "profsh: on demand: profsh trace --pid PID --steps N records the next N steps of PID\n");
  };
  callbacks.poll = [&](ControlChannel& control) {
    if (server) server->Poll(control);
  };
  callbacks.window = [&](WindowTrace w, ControlChannel&) {
    if (server && server->Answer(w)) return;
    std::string what = w.info.has_steps ? "steps " + std::to_string(w.info.first_step) + "-" +
                                              std::to_string(w.info.last_step)
                                        : w.info.reason;
    std::printf("== window %llu of pid %lld (%s)\n", static_cast<unsigned long long>(w.info.index),
                static_cast<long long>(w.info.pid), what.c_str());
    if (print_table) {
      auto averages = ComputeKeyAverages(BuildFunctionEvents(*w.trace), group_by_shape, 0);
      if (averages.rows.empty()) {
        std::printf("(nothing recorded in this window)\n");
      } else if (auto text = BuildAveragesTable(averages, table); text.ok()) {
        std::fputs(text.value().c_str(), stdout);
      }
    }
    std::string path = WindowPath(output, w.info);
    const bool json = EndsWith(path, ".json") || EndsWith(path, ".json.gz");
    Status saved = ExportTrace(*w.trace, json ? "chrome" : "profsh", path);
    std::printf("%s\n",
                saved.ok() ? ("saved " + path).c_str() : ("not saved: " + saved.message()).c_str());
    std::fflush(stdout);
  };
  auto recorded = RecordWorkloadLive(launch, keep_session, callbacks);
  if (server) server->Close("the workload ended");
  if (!recorded.ok()) {
    std::fprintf(stderr, "profsh run: %s\n", recorded.error().message.c_str());
    return 127;
  }
  LiveRecording& r = recorded.value();
  for (const std::string& w : r.warnings) std::fprintf(stderr, "profsh: warning: %s\n", w.c_str());
  std::fprintf(stderr, "profsh: %llu windows; %s\n", static_cast<unsigned long long>(r.windows),
               DescribeRecording(r.summary).c_str());
  if (r.launch.term_signal) {
    std::fprintf(stderr, "profsh: %s was killed by signal %d\n", launch.argv[0].c_str(),
                 r.launch.term_signal);
  }
  return r.launch.exit_code;
}

int RunRunCommand(int argc, char** argv) {
  LaunchOptions launch;
  std::string output;
  TableOptions table;
  table.sort_by = "cpu_time_total";
  table.row_limit = 25;
  bool group_by_shape = false, print_table = true, keep_session = false;
  int i = 1;
  auto value = [&](const std::string& option) -> std::string {
    if (i + 1 >= argc) {
      std::fprintf(stderr, "profsh run: %s needs a value\n", option.c_str());
      std::exit(2);
    }
    return argv[++i];
  };
  auto number = [&](const std::string& option) -> long {
    std::string v = value(option);
    char* end = nullptr;
    long n = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || n < 0) {
      std::fprintf(stderr, "profsh run: %s needs a non-negative number, got '%s'\n", option.c_str(),
                   v.c_str());
      std::exit(2);
    }
    return n;
  };
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.empty() || a[0] != '-') break;
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "-o" || a == "--output") {
      output = value(a);
    } else if (a == "--activities") {
      launch.activities = SplitList(value(a));
    } else if (a == "--sort-by") {
      table.sort_by = value(a);
    } else if (a == "--row-limit") {
      table.row_limit = number(a);
    } else if (a == "--group-by-input-shape") {
      group_by_shape = true;
    } else if (a == "--record-shapes") {
      launch.record_shapes = true;
    } else if (a == "--with-stack") {
      launch.with_stack = true;
    } else if (a == "--with-flops") {
      launch.with_flops = true;
    } else if (a == "--profile-memory") {
      launch.profile_memory = true;
    } else if (a == "--no-table") {
      print_table = false;
    } else if (a == "--keep-session") {
      keep_session = true;
    } else if (a == "--buffer-kb") {
      launch.buffer_kb =
          static_cast<uint32_t>(std::min<long>(number(a), UINT32_MAX));  // checked by the launcher
    } else if (a == "--drain-ms") {
      launch.drain_ms = static_cast<uint32_t>(std::min<long>(number(a), UINT32_MAX));
    } else if (a == "--schedule") {
      auto s = ParseSchedule(value(a));
      if (!s.ok()) {
        std::fprintf(stderr, "profsh run: %s\n", s.error().message.c_str());
        return 2;
      }
      launch.schedule = s.value();
    } else if (a == "--step-marker") {
      launch.step_marker = value(a);
      Status st = CheckStepMarker(launch.step_marker);
      if (!st.ok()) {
        std::fprintf(stderr, "profsh run: --step-marker: %s\n", st.message().c_str());
        return 2;
      }
    } else if (a == "--capture-range") {
      launch.capture_range = value(a);
    } else if (a == "--on-demand") {
      launch.on_demand = true;
    } else {
      std::fprintf(stderr, "profsh run: unknown option '%s'\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  for (; i < argc; ++i) launch.argv.push_back(argv[i]);
  if (launch.argv.empty()) {
    std::fprintf(stderr, "profsh run: no command given\n%s", kUsage);
    return 2;
  }
  if (table.sort_by && !IsSortKey(*table.sort_by)) {
    std::fprintf(stderr, "profsh run: unknown --sort-by key '%s'\n", table.sort_by->c_str());
    return 2;
  }

  if (launch.schedule || !launch.capture_range.empty() || launch.on_demand) {
    return RunLive(launch, output, table, group_by_shape, print_table, keep_session);
  }
  auto recorded = RecordWorkload(launch, keep_session);
  if (!recorded.ok()) {
    std::fprintf(stderr, "profsh run: %s\n", recorded.error().message.c_str());
    return 127;
  }
  Recording& r = recorded.value();
  Trace& trace = *r.session.trace;
  if (print_table) {
    auto averages = ComputeKeyAverages(BuildFunctionEvents(trace), group_by_shape, 0);
    if (averages.rows.empty()) {
      std::printf("(no ranges were recorded: the workload announced nothing through %s)\n",
                  launch.activities.size() == 1 ? launch.activities[0].c_str() : "NVTX or ITT");
    } else {
      auto text = BuildAveragesTable(averages, table);
      if (!text.ok()) {
        std::fprintf(stderr, "profsh run: %s\n", text.error().message.c_str());
        return 2;
      }
      std::fputs(text.value().c_str(), stdout);
    }
    std::fflush(stdout);
  }
  for (const std::string& w : trace.warnings)
    std::fprintf(stderr, "profsh: warning: %s\n", w.c_str());
  if (output.empty()) output = NewTracePath("profsh");
  const bool json = EndsWith(output, ".json") || EndsWith(output, ".json.gz");
  Status saved = ExportTrace(trace, json ? "chrome" : "profsh", output);
  std::fprintf(stderr, "profsh: %s\n", DescribeRecording(r.session.summary).c_str());
  if (!saved.ok()) {
    std::fprintf(stderr, "profsh run: %s\n", saved.message().c_str());
  } else {
    std::fprintf(stderr, "profsh: trace saved to %s (profsh.load(\"%s\"))\n", output.c_str(),
                 output.c_str());
  }
  if (r.session_kept)
    std::fprintf(stderr, "profsh: streams kept in %s\n", r.launch.session.c_str());
  if (r.launch.term_signal) {
    std::fprintf(stderr, "profsh: %s was killed by signal %d\n", launch.argv[0].c_str(),
                 r.launch.term_signal);
  }
  return r.launch.exit_code;
}

}  // namespace profsh::repl
