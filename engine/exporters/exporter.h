// Exporters write a Trace (or an analysis of it) to a file. Each format is one Exporter behind
// this interface, found by name in the registry; all of them write through AtomicWriter.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/io/atomic_writer.h"
#include "engine/trace/trace.h"
#include "engine/util/result.h"

namespace profsh {

using ExportOptions = std::map<std::string, std::string>;

class Exporter {
 public:
  virtual ~Exporter() = default;
  virtual std::string_view name() const = 0;
  virtual Status Write(const Trace& trace, const ExportOptions& options,
                       AtomicWriter& out) const = 0;
};

class ExporterRegistry {
 public:
  static ExporterRegistry& Instance();
  void Register(std::unique_ptr<Exporter> exporter);
  const Exporter* Find(std::string_view name) const;
  std::vector<std::string_view> names() const;

 private:
  std::vector<std::unique_ptr<Exporter>> exporters_;
};

// Finds the exporter, writes `path` atomically.
Status ExportTrace(const Trace& trace, std::string_view format, const std::string& path,
                   const ExportOptions& options = {});

// An arrow the Chrome export draws over the trace's events: a flow event pair ("ph": "s" at its
// start, "f" at its end), an analysis's mark such as an edge of a critical path. Its ends are
// given as the JSON of their pid and tid, so that an arrow may come from a rank's own trace.
struct ChromeFlow {
  std::string from_pid, from_tid, to_pid, to_tid;  // JSON values
  int64_t from_ts, to_ts;                          // ns
  std::string name, cat;
  std::string args;  // the "args" object's members as JSON text ("\"weight\": 3"), or empty
};
// The Chrome export with `flows` after the trace's events (ids from 0 in their own category).
Status ExportChromeTrace(const Trace& trace, const std::string& path, const ExportOptions& options,
                         std::span<const ChromeFlow> flows);

std::unique_ptr<Exporter> MakeChromeTraceExporter();
std::unique_ptr<Exporter> MakeProfshFormatExporter();
std::unique_ptr<Exporter> MakeStacksExporter();
// SQLite with Perfetto's table names (engine/exporters/sqlite_database.h).
std::unique_ptr<Exporter> MakeSqliteExporter();

}  // namespace profsh
