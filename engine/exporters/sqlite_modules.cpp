#include "engine/exporters/sqlite_modules.h"

#include <cctype>
#include <string_view>

namespace profsh::sqlite {

namespace {

struct Module {
  const char* name;
  const char* views;
};

// slices.with_context, on std.thread.with_context's thread-with-process rows: the slices of
// thread tracks with their thread and process, those of process tracks with their process.
constexpr Module kModules[] = {
    {"slices.with_context", R"sql(
CREATE VIEW _thread_with_process AS
SELECT thread.utid, thread.tid, thread.name AS thread_name, thread.is_main_thread,
  process.upid, process.pid, process.name AS process_name
FROM thread LEFT JOIN process USING (upid);
CREATE VIEW thread_slice AS
SELECT slice.id, slice.ts, slice.dur, slice.category, slice.name, slice.track_id,
  thread_track.name AS track_name, _thread_with_process.thread_name, _thread_with_process.utid,
  _thread_with_process.tid, _thread_with_process.is_main_thread,
  _thread_with_process.process_name, _thread_with_process.upid, _thread_with_process.pid,
  slice.depth, slice.parent_id, slice.arg_set_id, slice.thread_ts, slice.thread_dur
FROM thread_track JOIN _thread_with_process USING (utid)
JOIN slice ON slice.track_id = thread_track.id;
CREATE VIEW process_slice AS
SELECT slice.id, slice.ts, slice.dur, slice.category, slice.name, slice.track_id,
  process_track.name AS track_name, process.name AS process_name, process.upid, process.pid,
  slice.depth, slice.parent_id, slice.arg_set_id, slice.thread_ts, slice.thread_dur
FROM slice JOIN process_track ON slice.track_id = process_track.id JOIN process USING (upid);
CREATE VIEW thread_or_process_slice AS
SELECT slice.id, slice.ts, slice.dur, slice.category, slice.name, slice.track_id,
  thread_track.name AS track_name, _thread_with_process.thread_name, _thread_with_process.utid,
  _thread_with_process.tid, _thread_with_process.process_name, _thread_with_process.upid,
  _thread_with_process.pid, slice.depth, slice.parent_id, slice.arg_set_id
FROM thread_track JOIN _thread_with_process USING (utid)
JOIN slice ON slice.track_id = thread_track.id
UNION ALL
SELECT slice.id, slice.ts, slice.dur, slice.category, slice.name, slice.track_id,
  process_track.name AS track_name, NULL AS thread_name, NULL AS utid, NULL AS tid,
  process.name AS process_name, process.upid AS upid, process.pid AS pid, slice.depth,
  slice.parent_id, slice.arg_set_id
FROM slice JOIN process_track ON slice.track_id = process_track.id JOIN process USING (upid);
)sql"},
};

std::string ProvidedList() {
  std::string list;
  for (const Module& m : kModules) list += (list.empty() ? "" : ", ") + std::string(m.name);
  return list;
}

bool Provided(std::string_view name) {
  for (const Module& m : kModules) {
    const std::string_view provided = m.name;
    if (name == provided) return true;
    // A wildcard ("slices.*") names every module under its package.
    if (name.size() >= 2 && name.substr(name.size() - 2) == ".*" &&
        provided.substr(0, name.size() - 1) == name.substr(0, name.size() - 1))
      return true;
  }
  return false;
}

// Skips spaces and SQL comments from `at`.
size_t SkipSpace(std::string_view sql, size_t at) {
  while (at < sql.size()) {
    if (std::isspace(static_cast<unsigned char>(sql[at]))) {
      ++at;
    } else if (sql.substr(at, 2) == "--") {
      at = sql.find('\n', at);
      if (at == std::string_view::npos) return sql.size();
    } else if (sql.substr(at, 2) == "/*") {
      at = sql.find("*/", at + 2);
      if (at == std::string_view::npos) return sql.size();
      at += 2;
    } else {
      break;
    }
  }
  return at;
}

// Reads the word at `at` if it is `word` (any case); returns the position after it or npos.
size_t Keyword(std::string_view sql, size_t at, std::string_view word) {
  if (sql.size() - at < word.size()) return std::string_view::npos;
  for (size_t i = 0; i < word.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(sql[at + i])) != word[i])
      return std::string_view::npos;
  const size_t end = at + word.size();
  if (end < sql.size() && (std::isalnum(static_cast<unsigned char>(sql[end])) || sql[end] == '_'))
    return std::string_view::npos;
  return end;
}

}  // namespace

Status CreateModuleViews(const Database& db) {
  for (const Module& m : kModules)
    if (Status s = db.Execute(m.views); !s.ok()) return s;
  return Status::Ok();
}

Result<std::string> TakeModuleIncludes(const std::string& sql) {
  const std::string_view text = sql;
  size_t at = SkipSpace(text, 0);
  for (;;) {
    size_t p = Keyword(text, at, "INCLUDE");
    if (p != std::string_view::npos) p = Keyword(text, SkipSpace(text, p), "PERFETTO");
    if (p != std::string_view::npos) p = Keyword(text, SkipSpace(text, p), "MODULE");
    if (p == std::string_view::npos) break;
    const size_t name_at = SkipSpace(text, p);
    size_t name_end = name_at;
    while (name_end < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[name_end])) || text[name_end] == '_' ||
            text[name_end] == '.' || text[name_end] == '*'))
      ++name_end;
    const std::string name(text.substr(name_at, name_end - name_at));
    if (name.empty()) return Error{"INCLUDE PERFETTO MODULE: no module named"};
    if (!Provided(name))
      return Error{"INCLUDE PERFETTO MODULE " + name +
                   ": profsh does not provide this module (it provides " + ProvidedList() +
                   "; the tables and the other functions need no INCLUDE)"};
    at = SkipSpace(text, name_end);
    if (at < text.size() && text[at] != ';')
      return Error{"INCLUDE PERFETTO MODULE " + name + ": expected ';' after the module name"};
    if (at < text.size()) at = SkipSpace(text, at + 1);
  }
  return std::string(text.substr(at));
}

}  // namespace profsh::sqlite
