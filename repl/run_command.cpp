#include "repl/run_command.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/analysis/averages_table.h"
#include "engine/analysis/function_events.h"
#include "engine/exporters/exporter.h"
#include "engine/io/atomic_writer.h"
#include "engine/io/paths.h"
#include "engine/recording/signal_forwarding.h"
#include "engine/session/on_demand.h"
#include "engine/session/recording.h"
#include "engine/summary/summarize.h"
#include "engine/util/edit_distance.h"
#include "engine/util/human_text.h"
#include "repl/command_line.h"
#include "repl/flight_run.h"
#include "repl/report_command.h"

namespace profsh::repl {

namespace {

constexpr char kUsage[] =
    "usage: profsh run [options] [--] CMD [ARGS...]\n"
    "\n"
    "Runs CMD (and every process it starts) with profsh's collector injected, then prints the\n"
    "operators table of what the processes recorded (PyTorch operators and record_function\n"
    "ranges, NVTX ranges, ITT tasks, and CUDA kernels with cuda) and saves the trace.\n"
    "The exit status is CMD's; 2 when the trace (or --report) cannot be written where asked\n"
    "(checked before CMD starts), and 1 when CMD succeeded but its trace was not saved.\n"
    "\n"
    "options:\n"
    "  -o, --output PATH          save the trace here (default: profsh-DATE-TIME.profsh in the\n"
    "                             current folder; a .json or .json.gz name writes Chrome JSON)\n"
    "  --activities LIST          what to collect: nvtx,itt,torch,cuda,cpu (default:\n"
    "                             nvtx,itt,torch, and cuda where a CUDA driver is present)\n"
    "  --sample-rate HZ           cpu: samples per second of each thread's CPU time (default 999)\n"
    "  --sample-stack-bytes N     cpu: user stack copied per sample for unwinding (default 8192)\n"
    "  --sample-event E           cpu: auto (hardware cycles where counted, else the CPU clock),\n"
    "                             cycles or cpu-clock (default auto)\n"
    "  --record-shapes            PyTorch operators' input shapes and types\n"
    "  --with-stack[=FORM]        PyTorch operators' Python stacks: lines (the default: each\n"
    "                             frame at the line it is executing) or torch (torch 1.13's\n"
    "                             form: functions at their def line, C functions as frames,\n"
    "                             so group_by_stack_n groups as torch's; costs a profile hook)\n"
    "  --with-flops               FLOPs of the operators torch has formulas for\n"
    "  --profile-memory[=SCOPE]   allocations and frees, attributed to the innermost range, of\n"
    "                             the processes in SCOPE: workload (the default: the command,\n"
    "                             Python and torch processes; not the compilers and tools they\n"
    "                             run, which the summary counts) or all (every process)\n"
    "  --itt-domains[=D1,D2]      the table's ITT tasks: of every domain, or of those named\n"
    "                             (library tasks such as oneDNN's dnnl::primitive::execute\n"
    "                             nest in torch's operators; by default a run with PyTorch\n"
    "                             operators shows only torch's own domain, PyTorch, and\n"
    "                             says what it left out)\n"
    "  --sort-by KEY              the table's order (default: cpu_time_total)\n"
    "  --row-limit N              rows in the table (default: 25)\n"
    "  --group-by-input-shape     one row per operator and input shapes\n"
    "  --no-table                 print no table\n"
    "  --keep-session             keep the raw per-process streams (the folder is printed)\n"
    "  --report PATH              also write a report of the run (.html or .md; profsh report)\n"
    "  --report-template NAME     its template (default: summary)\n"
    "  --summary DIR              also write each rank's summary into DIR (made if missing):\n"
    "                             rank-R.summary.sqlite, as profsh summarize writes them\n"
    "  --buffer-kb N              per-thread event buffer (default: 8192)\n"
    "  --cupti PATH               libcupti for the cuda activity (default: beside the\n"
    "                             CUDA toolkit)\n"
    "  --drain-ms N               how often buffers are written out, 1..100 (default: 20)\n"
    "\n"
    "long jobs (each window's table is printed, and its trace saved as BASE.PID.N.profsh, while\n"
    "the workload runs):\n"
    "  --schedule SPEC            torch's schedule, e.g. "
    "skip_first=10,wait=5,warmup=1,active=3,repeat=2\n"
    "  --step-marker REGEX|PRESET the ranges or marks that start a step: a regular expression\n"
    "                             (ECMAScript syntax, as std::regex and JavaScript read it;\n"
    "                             searched anywhere in the name, e.g. '^Optimizer\\.step#'), or a\n"
    "                             preset for what torch records in unmodified scripts:\n"
    "                             optimizer (each optimizer.step(): ^Optimizer\\.step#) or\n"
    "                             dataloader (each batch: ^enumerate\\(DataLoader\\)#)\n"
    "                             (default: ^ProfilerStep#\\d+, torch.profiler's prof.step());\n"
    "                             Lua's profsh.profile{step_marker=} takes a Lua pattern instead\n"
    "  --capture-range NAME       record only while a range of that name is open\n"
    "  --on-demand                record nothing until asked: profsh trace --pid PID --steps N\n"
    "                             (which saves the trace: -o is refused here)\n"
    "  --gpu-wait-ms N            how long a window waits after its end for the GPU work\n"
    "                             launched in it, 1..3600000 (default: 10000)\n"
    "\n"
    "flight recorder (every step recorded, the last ones kept in memory; the steps around a\n"
    "trigger saved as BASE.PID.N.profsh while the workload runs):\n"
    "  --flight-recorder N|Ss     keep each process's last N steps, or the last S seconds\n"
    "  --flight-recorder-mb N     bound on the kept steps' memory, and on each process's\n"
    "                             event buffers together (default: 256)\n"
    "  --trigger SPEC             when to save (repeatable): slow-step[:FACTOR] (longer than\n"
    "                             FACTOR x the median, default 1.5), memory-growth[:N%]\n"
    "                             (default 10%), gpu-idle[:N%] (default 30%), range:NAME>MS,\n"
    "                             or a Lua expression over step and history, e.g.\n"
    "                             'step.duration > 1.3 * history.p95'\n"
    "  --dump-before N            steps saved before the triggering one (default: 5)\n"
    "  --dump-after N             steps saved after it (default: 2)\n"
    "  --watchdog SECONDS         a process that began steps and begins none for SECONDS is\n"
    "                             hung: every process dumps its ring up to then, with each\n"
    "                             thread's open ranges and operators (innermost first) and the\n"
    "                             last collectives it entered; the workload runs on\n"
    "  --watchdog-kill            and then kill the workload's processes (SIGKILL)\n"
    "  (profsh trace --pid PID --dump and SIGUSR2 to profsh dump every process's ring now)\n"
    "\n"
    "Options take --opt value or --opt=value. SIGINT, SIGTERM and SIGHUP sent to profsh are\n"
    "passed on to CMD; profsh waits for it and saves the trace (a second signal: at once, with\n"
    "what was recorded so far).\n";

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

// Steps on the command line: regular expressions, and presets for the ranges torch records in
// every training loop (torch/optim/optimizer.py and torch/utils/data/dataloader.py name them
// "Optimizer.step#SGD.step" and "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
// in torch 1.13 and 2.x alike).
constexpr char kProfilerStepExpression[] = "^ProfilerStep#\\d+";
struct StepMarkerPreset {
  const char* name;
  const char* expression;
};
constexpr StepMarkerPreset kStepMarkerPresets[] = {
    {"optimizer", "^Optimizer\\.step#"},
    {"dataloader", "^enumerate\\(DataLoader\\)#"},
};

// The expression a --step-marker value stands for.
std::string StepMarkerExpression(const std::string& value) {
  for (const StepMarkerPreset& p : kStepMarkerPresets) {
    if (value == p.name) return p.expression;
  }
  return value;
}

// "%d" when `marker` holds a Lua character class (a Lua pattern given where a regular
// expression is read), else "".
std::string LuaPatternClass(const std::string& marker) {
  for (size_t i = 0; i + 1 < marker.size(); ++i) {
    if (marker[i] == '%' && std::strchr("acdglpsuwx", std::tolower(marker[i + 1])) != nullptr)
      return marker.substr(i, 2);
  }
  return "";
}

// "; the names seen most often: 'A' (40), 'B' (40)": what the processes recorded before any step,
// for a marker that matched nothing.
std::string FrequentNames(const SessionSummary& summary) {
  auto names = summary.names_before_first_step;
  if (names.empty()) return "";
  std::stable_sort(names.begin(), names.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string text = "; the range names seen most often: ";
  for (size_t i = 0; i < names.size() && i < 5; ++i) {
    text += (i ? ", '" : "'") + names[i].first + "' (" + std::to_string(names[i].second) + ")";
  }
  return text;
}

// A PyTorch trace's table leaves library ITT tasks out (FunctionEvents' IttSelection): say so.
void NoteIttTasksLeftOut(const FunctionEvents& events) {
  if (events.itt_tasks_left_out == 0) return;
  std::string domains;
  for (const std::string& d : events.itt_domains_left_out)
    domains += (domains.empty() ? "" : ", ") + d;
  std::fprintf(stderr,
               "profsh: %s (%s) not in the table: they nest in torch's operators, which "
               "torch.profiler shows without them; --itt-domains adds them\n",
               Plural(events.itt_tasks_left_out, "ITT task", "ITT tasks").c_str(), domains.c_str());
}

}  // namespace

// Why a long job recorded nothing, when the reason is known: ": no range or mark matched ...".
std::string WhyNoWindow(const LaunchOptions& launch, const LiveRecording& r) {
  if (r.windows > 0 || launch.on_demand) return "";
  if (launch.schedule && r.summary.steps == 0) {
    return ": no range or mark matched '" + launch.step_marker + "' (see --step-marker)" +
           FrequentNames(r.summary);
  }
  if (launch.schedule) {
    return ": the workload ended after " + Plural(r.summary.steps, "step", "steps") +
           ", before the schedule's first active step";
  }
  if (!launch.capture_range.empty()) return ": no range named '" + launch.capture_range + "' ended";
  return "";
}

// A run whose trace was lost fails, keeping the workload's own failure if it had one.
int ExitStatusWhenNotSaved(int workload_status) {
  return workload_status != 0 ? workload_status : 1;
}

// What profsh did with the signals it received while the workload ran.
void ReportSignals(const LaunchOptions& launch, const LaunchResult& r) {
  if (r.signals_received == 0) return;
  const std::string name = SignalName(r.forwarded_signal);
  if (r.still_running) {
    std::fprintf(stderr,
                 "profsh: %s again: saving what was recorded so far; %s (pid %lld) may still be "
                 "running\n",
                 name.c_str(), launch.argv[0].c_str(), static_cast<long long>(r.pid));
  } else if (r.signal_from_terminal) {
    std::fprintf(stderr,
                 "profsh: %s from the terminal went to %s (pid %lld) and to profsh; %s then "
                 "ended\n",
                 name.c_str(), launch.argv[0].c_str(), static_cast<long long>(r.pid),
                 launch.argv[0].c_str());
  } else {
    std::fprintf(stderr, "profsh: %s passed on to %s (pid %lld), which then ended\n", name.c_str(),
                 launch.argv[0].c_str(), static_cast<long long>(r.pid));
  }
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

// Windows are reported while the workload runs: each one's table, and its trace saved.
int RunLive(LaunchOptions& launch, std::string output, const TableOptions& table,
            const IttSelection& itt, bool group_by_shape, bool print_table, bool keep_session) {
  if (output.empty()) output = NewTracePath("profsh");
  uint64_t windows_not_saved = 0;
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
  };
  callbacks.launched = [&](int64_t pid) {
    if (!server) return;
    std::fprintf(stderr,
                 "profsh: on demand: profsh trace --pid %lld --steps N records its next N steps\n",
                 static_cast<long long>(pid));
  };
  callbacks.poll = [&](ControlChannel& control) {
    if (!server) return;
    server->Poll(control);
    for (const OnDemandServer::DumpRequest& r : server->TakeDumpRequests())
      server->Dumped(r.client, Error{"this run has no flight recorder to dump (profsh run "
                                     "--flight-recorder N); profsh trace --pid PID --steps N "
                                     "records its next steps"});
  };
  callbacks.window = [&](WindowTrace w, ControlChannel&) {
    if (server && server->Answer(w)) return;
    std::string what = w.info.has_steps ? "steps " + std::to_string(w.info.first_step) + "-" +
                                              std::to_string(w.info.last_step)
                                        : w.info.reason;
    std::printf("== window %llu of pid %lld (%s)\n", static_cast<unsigned long long>(w.info.index),
                static_cast<long long>(w.info.pid), what.c_str());
    for (const std::string& warning : w.trace->warnings)
      std::fprintf(stderr, "profsh: window %llu of pid %lld: warning: %s\n",
                   static_cast<unsigned long long>(w.info.index),
                   static_cast<long long>(w.info.pid), warning.c_str());
    if (print_table) {
      std::shared_ptr<const FunctionEvents> events = BuildFunctionEvents(*w.trace, itt);
      NoteIttTasksLeftOut(*events);
      auto averages = ComputeKeyAverages(events, group_by_shape, 0);
      if (averages.rows.empty()) {
        std::printf("(nothing recorded in this window)\n");
      } else if (auto text = BuildAveragesTable(averages, table); text.ok()) {
        std::fputs(text.value().c_str(), stdout);
      }
    }
    std::string path = WindowPath(output, w.info);
    const bool json = EndsWith(path, ".json") || EndsWith(path, ".json.gz");
    Status saved = ExportTrace(*w.trace, json ? "chrome" : "profsh", path);
    if (!saved.ok()) ++windows_not_saved;
    std::printf("%s\n",
                saved.ok() ? ("saved " + path).c_str() : ("not saved: " + saved.message()).c_str());
    std::fflush(stdout);
  };
  LaunchResult ran;
  ran.exit_code = -1;
  auto recorded = RecordWorkloadLive(launch, keep_session, callbacks, &ran);
  if (server) server->Close("the workload ended");
  if (!recorded.ok()) {
    std::fprintf(stderr, "profsh run: %s\n", recorded.error().message.c_str());
    return ran.exit_code >= 0 ? ran.exit_code : 127;  // a workload that ran keeps its status
  }
  LiveRecording& r = recorded.value();
  ReportSignals(launch, r.launch);
  for (const std::string& w : r.warnings) std::fprintf(stderr, "profsh: warning: %s\n", w.c_str());
  std::fprintf(stderr, "profsh: %s%s; %s\n", Plural(r.windows, "window", "windows").c_str(),
               WhyNoWindow(launch, r).c_str(), DescribeRecording(r.summary).c_str());
  if (r.launch.term_signal) {
    std::fprintf(stderr, "profsh: %s was killed by %s\n", launch.argv[0].c_str(),
                 SignalName(r.launch.term_signal).c_str());
  }
  if (windows_not_saved > 0) {
    std::fprintf(stderr, "profsh run: %s not saved\n",
                 Plural(windows_not_saved, "window was", "windows were").c_str());
    return ExitStatusWhenNotSaved(r.launch.exit_code);
  }
  return r.launch.exit_code;
}

// A summary that fails, like a report, leaves the run's status alone: its error is on stderr.
static void WriteSummaries(const Trace& trace, const std::string& trace_path,
                           const std::string& folder) {
  auto ranks = SummarizeEachRank(trace, trace_path, folder, SummarizeOptions{}, "profsh run");
  if (!ranks.ok()) {
    std::fprintf(stderr, "profsh run: --summary: %s\n", ranks.error().message.c_str());
    return;
  }
  std::fprintf(stderr, "profsh: %s summarized in %s\n",
               Plural(ranks.value().size(), "rank", "ranks").c_str(), folder.c_str());
}

int RunRunCommand(int argc, char** argv) {
  LaunchOptions launch;
  std::string output, report, report_template, summary_dir;
  TableOptions table;
  table.sort_by = "cpu_time_total";
  table.row_limit = 25;
  bool group_by_shape = false, print_table = true, keep_session = false;
  IttSelection itt;
  // clang-format off
  CommandLine cl("profsh run", argc, argv, {"--help",          "--output",
                                            "--activities",    "--sort-by",
                                            "--row-limit",     "--group-by-input-shape",
                                            "--record-shapes", "--with-stack",
                                            "--with-flops",    "--profile-memory",
                                            "--no-table",      "--keep-session",
                                            "--buffer-kb",     "--drain-ms",
                                            "--schedule",      "--step-marker",
                                            "--capture-range", "--on-demand",
                                            "--report",        "--report-template",
                                            "--sample-rate",   "--sample-stack-bytes",
                                            "--sample-event",  "--cupti",
                                            "--gpu-wait-ms",   "--itt-domains",
                                            "--flight-recorder", "--flight-recorder-mb",
                                            "--trigger", "--dump-before", "--dump-after",
                                            "--watchdog", "--watchdog-kill",
                                            "--summary"});
  // clang-format on
  bool flight = false;
  FlightSettings flight_settings;
  std::vector<std::string> trigger_specs;
  long long flight_mb = kDefaultFlightRecorderMb;
  bool command_started = false;
  while (cl.Next()) {
    const std::string& a = cl.arg();
    if (a == "--") {
      command_started = cl.Next();
      break;
    }
    if (!cl.IsOption()) {
      command_started = true;
      break;
    }
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "-o" || a == "--output") {
      output = cl.Value("a file name");
    } else if (a == "--report") {
      report = cl.Value("a report file (.html or .md)");
      if (!EndsWith(report, ".html") && !EndsWith(report, ".htm") && !EndsWith(report, ".md") &&
          !EndsWith(report, ".markdown")) {
        cl.Fail("--report " + report + ": a report is written as .html or .md");
      }
    } else if (a == "--report-template") {
      report_template = cl.Value("a template name or a FILE.lua");
    } else if (a == "--summary") {
      summary_dir = cl.Value("a folder for the rank summaries");
    } else if (a == "--activities") {
      launch.activities = SplitList(cl.Value("a list such as nvtx,itt,torch"));
      for (const std::string& activity : launch.activities) {
        const auto& known = KnownActivities();
        if (std::find(known.begin(), known.end(), activity) != known.end()) continue;
        std::string hint = ClosestName(activity, known, 3);
        cl.Fail("unknown activity '" + activity + "' (activities: " + ActivityList() + ")" +
                (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
      }
    } else if (a == "--sort-by") {
      table.sort_by = cl.Value("a sort key");
      if (!IsSortKey(*table.sort_by)) {
        std::string hint = ClosestName(*table.sort_by, SortKeys());
        cl.Fail("unknown --sort-by key '" + *table.sort_by + "'" +
                (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
      }
    } else if (a == "--row-limit") {
      table.row_limit = cl.Number(0);
    } else if (a == "--group-by-input-shape") {
      cl.Flag();
      group_by_shape = true;
    } else if (a == "--itt-domains") {
      itt.mode = IttSelection::Mode::kAll;
      if (cl.HasInlineValue()) {
        itt.mode = IttSelection::Mode::kDomains;
        itt.domains = SplitList(cl.Value("ITT domain names"));
      }
    } else if (a == "--record-shapes") {
      cl.Flag();
      launch.record_shapes = true;
    } else if (a == "--with-stack") {
      const std::string form = cl.HasInlineValue() ? cl.Value("a stack form") : "lines";
      if (form == "lines") {
        launch.with_stack = StackForm::kExecutingLine;
      } else if (form == "torch") {
        launch.with_stack = StackForm::kTorch;
      } else {
        cl.Fail("--with-stack=" + form + ": the stack forms are 'lines' and 'torch'");
      }
    } else if (a == "--with-flops") {
      cl.Flag();
      launch.with_flops = true;
    } else if (a == "--profile-memory") {
      const std::string scope = cl.HasInlineValue() ? cl.Value("a memory scope") : "workload";
      if (scope != "workload" && scope != "all")
        cl.Fail("--profile-memory=" + scope + ": the scopes are 'workload' and 'all'");
      launch.profile_memory = true;
      launch.profile_memory_all = scope == "all";
    } else if (a == "--no-table") {
      cl.Flag();
      print_table = false;
    } else if (a == "--keep-session") {
      cl.Flag();
      keep_session = true;
    } else if (a == "--buffer-kb") {
      launch.buffer_kb = static_cast<uint32_t>(std::min<long long>(cl.Number(0), kMaxBufferKb + 1));
      if (launch.buffer_kb > kMaxBufferKb)
        cl.Fail("--buffer-kb: at most " + std::to_string(kMaxBufferKb) + " (KiB per thread)");
    } else if (a == "--cupti") {
      launch.cupti = cl.Value("the path of libcupti.so");
    } else if (a == "--drain-ms") {
      launch.drain_ms = static_cast<uint32_t>(std::min<long long>(cl.Number(0), kMaxDrainMs + 1));
      if (launch.drain_ms > kMaxDrainMs)
        cl.Fail("--drain-ms: at most " + std::to_string(kMaxDrainMs));
    } else if (a == "--gpu-wait-ms") {
      const long long ms = cl.Number(1);
      if (ms > kMaxGpuWaitMs) cl.Fail("--gpu-wait-ms: at most " + std::to_string(kMaxGpuWaitMs));
      launch.gpu_wait_ms = static_cast<uint32_t>(ms);
    } else if (a == "--schedule") {
      auto s = ParseSchedule(cl.Value("a schedule such as wait=1,warmup=1,active=2"));
      if (!s.ok()) cl.Fail(s.error().message);
      launch.schedule = s.value();
    } else if (a == "--step-marker") {
      const std::string marker = cl.Value("a regular expression, optimizer or dataloader");
      launch.step_marker = StepMarkerExpression(marker);
      launch.step_marker_syntax = StepMarkerSyntax::kRegex;
      Status st = CheckStepMarker(launch.step_marker, StepMarkerSyntax::kRegex);
      if (!st.ok()) cl.Fail("--step-marker: " + st.message());
      if (std::string lua = LuaPatternClass(marker); !lua.empty()) {
        std::fprintf(stderr,
                     "profsh run: warning: --step-marker takes a regular expression: '%s' is Lua "
                     "pattern syntax (a regular expression writes \\d, \\s, \\w, [a-z], \\.)\n",
                     lua.c_str());
      }
    } else if (a == "--capture-range") {
      launch.capture_range = cl.Value("a range name");
    } else if (a == "--on-demand") {
      cl.Flag();
      launch.on_demand = true;
    } else if (a == "--flight-recorder") {
      const std::string span = cl.Value("a number of steps, or of seconds such as 30s");
      if (!ParseFlightRecorderSpan(span, &flight_settings.options))
        cl.Fail("--flight-recorder " + span + ": a number of steps (20) or of seconds (30s)");
      flight = true;
    } else if (a == "--flight-recorder-mb") {
      flight_mb = cl.Number(1);
      if (flight_mb > (1 << 20)) cl.Fail("--flight-recorder-mb: at most 1048576");
    } else if (a == "--trigger") {
      trigger_specs.push_back(cl.Value("a trigger such as slow-step or a Lua expression"));
    } else if (a == "--dump-before") {
      flight_settings.options.before = cl.Number(0);
    } else if (a == "--dump-after") {
      flight_settings.options.after = cl.Number(0);
    } else if (a == "--watchdog") {
      const std::string text = cl.Value("a number of seconds");
      char* end = nullptr;
      const double seconds = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !(seconds > 0) || seconds > 86400)
        cl.Fail("--watchdog " + text + ": a number of seconds above 0, at most 86400");
      flight_settings.watchdog.seconds = seconds;
    } else if (a == "--watchdog-kill") {
      cl.Flag();
      flight_settings.watchdog.kill = true;
    } else if (a == "--sample-rate") {
      const long long hz = cl.Number(1);
      if (hz > 100000) cl.Fail("--sample-rate: at most 100000 (Hz)");
      launch.sample_rate = static_cast<uint32_t>(hz);
    } else if (a == "--sample-stack-bytes") {
      const long long n = cl.Number(8);
      if (n % 8 != 0 || n > 65528) cl.Fail("--sample-stack-bytes: a multiple of 8, at most 65528");
      launch.sample_stack_bytes = static_cast<uint32_t>(n);
    } else if (a == "--sample-event") {
      const std::string e = cl.Value("auto, cycles or cpu-clock");
      if (!ParseSampleEvent(e, &launch.sample_event))
        cl.Fail("--sample-event: auto, cycles or cpu-clock, not '" + e + "'");
    } else {
      cl.Unknown();
    }
  }
  if (command_started) {
    for (int i = cl.index(); i < argc; ++i) launch.argv.push_back(argv[i]);
  }
  if (launch.argv.empty()) cl.Fail("no command given (profsh run [options] -- CMD [ARGS...])");
  if (!flight && !trigger_specs.empty())
    cl.Fail("--trigger needs --flight-recorder N (the steps kept to save around it)");
  if (!flight && flight_settings.watchdog.seconds > 0)
    cl.Fail("--watchdog needs --flight-recorder N (the steps kept to dump on a hang)");
  if (flight_settings.watchdog.kill && flight_settings.watchdog.seconds == 0)
    cl.Fail("--watchdog-kill needs --watchdog SECONDS");
  if (flight) {
    if (launch.schedule || !launch.capture_range.empty() || launch.on_demand || !report.empty())
      cl.Fail(
          "--flight-recorder records every step: not with --schedule, --capture-range, "
          "--on-demand or --report");
    for (const std::string& spec : trigger_specs) {
      auto trigger = MakeTrigger(spec);
      if (!trigger.ok()) cl.Fail(trigger.error().message);
      flight_settings.triggers.push_back(std::move(trigger.value()));
    }
    flight_settings.options.max_bytes = static_cast<uint64_t>(flight_mb) << 20;
    launch.ring_total_kb = static_cast<uint64_t>(flight_mb) << 10;
    launch.schedule = Schedule{};  // every step is a window of its own (active = 1)
  }
  if (launch.step_marker.empty() && (launch.schedule || launch.on_demand)) {
    launch.step_marker = kProfilerStepExpression;
    launch.step_marker_syntax = StepMarkerSyntax::kRegex;
  }
  if (!output.empty() && launch.on_demand) {
    // On demand, what is recorded is saved by profsh trace (its -o), not by profsh run.
    cl.Fail(
        "-o has no effect with --on-demand: give it to profsh trace --pid PID --steps N -o PATH");
  }

  if (!report.empty() && (launch.schedule || !launch.capture_range.empty() || launch.on_demand)) {
    cl.Fail(
        "--report reports a whole run: not with --schedule, --capture-range or --on-demand "
        "(profsh report WINDOW.profsh reports a window)");
  }
  if (!report_template.empty() && report.empty()) cl.Fail("--report-template needs --report PATH");
  if (!summary_dir.empty() &&
      (flight || launch.schedule || !launch.capture_range.empty() || launch.on_demand)) {
    cl.Fail(
        "--summary summarizes a whole run: not with --flight-recorder, --schedule, "
        "--capture-range or --on-demand (profsh summarize WINDOW.profsh -o OUT summarizes a "
        "window)");
  }
  // Before the workload starts: a run of hours whose trace cannot be saved is lost.
  if (!launch.on_demand) {
    if (output.empty()) output = NewTracePath("profsh");
    for (const std::string* path : {&output, &report}) {
      if (path->empty()) continue;
      if (Status writable = CheckWritable(*path); !writable.ok()) {
        std::fprintf(stderr, "profsh run: %s (nothing was run)\n", writable.message().c_str());
        return 2;
      }
    }
    if (!summary_dir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(summary_dir, ec);
      if (ec || !std::filesystem::is_directory(summary_dir)) {
        std::fprintf(stderr,
                     "profsh run: --summary %s: cannot make this folder%s (nothing was run)\n",
                     summary_dir.c_str(), ec ? (": " + ec.message()).c_str() : "");
        return 2;
      }
    }
  }

  // Covers the wait, the load and the save: a signal in any of them is passed on or counted,
  // and does not end profsh before the trace is saved.
  SignalForwarding forwarding;
  if (flight) {
    return RunFlightRecorder(launch, output, std::move(flight_settings), keep_session);
  }
  if (launch.schedule || !launch.capture_range.empty() || launch.on_demand) {
    return RunLive(launch, output, table, itt, group_by_shape, print_table, keep_session);
  }
  // The folder is removed once the trace is saved, not before: if saving fails, it is all
  // there is.
  LaunchResult ran;
  ran.exit_code = -1;
  auto recorded = RecordWorkload(launch, /*keep_session=*/true, &ran);
  if (!recorded.ok()) {
    std::fprintf(stderr, "profsh run: %s\n", recorded.error().message.c_str());
    return ran.exit_code >= 0 ? ran.exit_code : 127;  // a workload that ran keeps its status
  }
  Recording& r = recorded.value();
  ReportSignals(launch, r.launch);
  Trace& trace = *r.session.trace;
  trace.source_path = "profsh run";
  if (print_table) {
    std::shared_ptr<const FunctionEvents> events = BuildFunctionEvents(trace, itt);
    NoteIttTasksLeftOut(*events);
    const EventSampleCounts samples = CountSamplesPerEvent(trace, *events);
    auto averages = ComputeKeyAverages(events, group_by_shape, 0, std::nullopt, &samples);
    if (averages.rows.empty()) {
      std::printf("(no ranges were recorded: the workload announced nothing through %s)\n",
                  launch.activities.size() == 1 ? launch.activities[0].c_str() : "NVTX or ITT");
    } else {
      auto text = BuildAveragesTable(averages, table);
      if (!text.ok()) {
        std::fprintf(stderr, "profsh run: %s\n", text.error().message.c_str());
      } else {
        std::fputs(text.value().c_str(), stdout);
      }
    }
    std::fflush(stdout);
  }
  for (const std::string& w : trace.warnings)
    std::fprintf(stderr, "profsh: warning: %s\n", w.c_str());
  const bool json = EndsWith(output, ".json") || EndsWith(output, ".json.gz");
  Status saved = ExportTrace(trace, json ? "chrome" : "profsh", output);
  std::fprintf(stderr, "profsh: %s\n", DescribeRecording(r.session.summary).c_str());
  const std::string& folder = r.launch.session;
  if (!saved.ok()) {
    std::fprintf(stderr,
                 "profsh run: the trace was not saved: %s\n"
                 "profsh: the recording stays in %s: profsh.load(\"%s\") reads it, and\n"
                 "        profsh -e 'profsh.load(arg[1]):save(arg[2])' -- %s OUT.profsh saves it\n",
                 saved.message().c_str(), folder.c_str(), folder.c_str(), folder.c_str());
  } else {
    std::fprintf(stderr, "profsh: trace saved to %s (profsh.load(\"%s\"))\n", output.c_str(),
                 output.c_str());
    // A report that fails leaves the run's status alone: its error is on stderr.
    if (!report.empty()) WriteReport({output}, report, report_template, "");
    if (!summary_dir.empty()) WriteSummaries(trace, output, summary_dir);
    if (keep_session) {
      std::fprintf(stderr, "profsh: streams kept in %s\n", folder.c_str());
    } else {
      RemoveSessionFolder(folder);
    }
  }
  if (r.launch.term_signal) {
    std::fprintf(stderr, "profsh: %s was killed by %s\n", launch.argv[0].c_str(),
                 SignalName(r.launch.term_signal).c_str());
  }
  return saved.ok() ? r.launch.exit_code : ExitStatusWhenNotSaved(r.launch.exit_code);
}

}  // namespace profsh::repl
