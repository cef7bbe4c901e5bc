#include "engine/exporters/sqlite_functions.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace profsh::sqlite {

namespace {

// A statement prepared once on the database the functions serve and reset before each use. It
// lives as long as the connection: Database's destructor finalizes every statement left before
// closing, and SQLite disconnects the table functions (whose statements these are) only then.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) {
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr) != SQLITE_OK) {
      error_ = sqlite3_errmsg(db);
      sqlite3_finalize(stmt_);
      stmt_ = nullptr;
    }
  }
  // For a statement given up on before the connection closes.
  void Finalize() {
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
  }
  void Reset() { sqlite3_reset(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool ok() const { return stmt_ != nullptr; }
  const std::string& error() const { return error_; }
  sqlite3_stmt* Bind(int64_t v) {
    sqlite3_reset(stmt_);
    sqlite3_bind_int64(stmt_, 1, v);
    return stmt_;
  }
  sqlite3_stmt* get() const { return stmt_; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  std::string error_;
};

// ---- extract_arg(arg_set_id, key) -----------------------------------------------------------

// The lookup is prepared on first use (the tables exist by then) and finalized with the
// connection (Database's destructor finalizes every statement left before closing).
struct ExtractArg {
  sqlite3_stmt* lookup = nullptr;
};

void ExtractArgFunction(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL)
    return sqlite3_result_null(ctx);
  auto* state = static_cast<ExtractArg*>(sqlite3_user_data(ctx));
  sqlite3* db = sqlite3_context_db_handle(ctx);
  if (state->lookup == nullptr &&
      sqlite3_prepare_v3(db,
                         "SELECT a.value_type, a.int_value, a.string_value, a.real_value "
                         "FROM __intrinsic_args a JOIN __intrinsic_arg_key k ON k.id = a.key_id "
                         "WHERE a.arg_set_id = ?1 AND k.key = ?2",
                         -1, SQLITE_PREPARE_PERSISTENT, &state->lookup, nullptr) != SQLITE_OK) {
    const std::string message = std::string("extract_arg: ") + sqlite3_errmsg(db);
    state->lookup = nullptr;
    return sqlite3_result_error(ctx, message.c_str(), -1);
  }
  sqlite3_stmt* stmt = state->lookup;
  sqlite3_reset(stmt);
  sqlite3_bind_int64(stmt, 1, sqlite3_value_int64(argv[0]));
  sqlite3_bind_value(stmt, 2, argv[1]);
  if (sqlite3_step(stmt) != SQLITE_ROW) return sqlite3_result_null(ctx);
  // Perfetto's extract_arg: the int column for ints, uints and bools, the string one for
  // strings and JSON, the real one for reals.
  const std::string_view type = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  const int column = type == "string" || type == "json" ? 2 : type == "real" ? 3 : 1;
  sqlite3_result_value(ctx, sqlite3_column_value(stmt, column));
  sqlite3_reset(stmt);
}

// ---- table functions ------------------------------------------------------------------------

using Row = std::vector<sqlite3_value*>;

struct Rows {
  std::vector<Row> rows;
  ~Rows() { Clear(); }
  void Clear() {
    for (Row& row : rows)
      for (sqlite3_value* v : row) sqlite3_value_free(v);
    rows.clear();
  }
  // Copies the current row of `stmt`.
  void Add(sqlite3_stmt* stmt) {
    Row row(static_cast<size_t>(sqlite3_column_count(stmt)));
    for (size_t c = 0; c < row.size(); ++c)
      row[c] = sqlite3_value_dup(sqlite3_column_value(stmt, static_cast<int>(c)));
    rows.push_back(std::move(row));
  }
};

constexpr char kSliceColumns[] =
    "id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id, thread_ts, "
    "thread_dur, thread_instruction_count, thread_instruction_delta";
constexpr char kFlowColumns[] = "id, slice_out, slice_in, trace_id, arg_set_id";

// Reads slices, their relatives and flows for the table functions.
class SliceGraph {
 public:
  explicit SliceGraph(sqlite3* db)
      : parent_(db, "SELECT parent_id FROM __intrinsic_slice WHERE id = ?"),
        children_(db, "SELECT id FROM __intrinsic_slice WHERE parent_id = ? ORDER BY id"),
        slice_(db, (std::string("SELECT ") + kSliceColumns + " FROM __intrinsic_slice WHERE id = ?")
                       .c_str()),
        outgoing_(db, (std::string("SELECT ") + kFlowColumns +
                       " FROM flow WHERE slice_out = ? ORDER BY id")
                          .c_str()),
        incoming_(db, (std::string("SELECT ") + kFlowColumns +
                       " FROM flow WHERE slice_in = ? ORDER BY id")
                          .c_str()) {}

  std::string error() const {
    for (const Statement* s : {&parent_, &children_, &slice_, &outgoing_, &incoming_})
      if (!s->ok()) return s->error();
    return "";
  }
  void Finalize() {
    for (Statement* s : {&parent_, &children_, &slice_, &outgoing_, &incoming_}) s->Finalize();
  }
  // Ends the statements' reads (a file's read transaction) between queries.
  void Reset() {
    for (Statement* s : {&parent_, &children_, &slice_, &outgoing_, &incoming_}) s->Reset();
  }
  bool Exists(int64_t id) { return sqlite3_step(parent_.Bind(id)) == SQLITE_ROW; }
  // Root first, as Perfetto lists them.
  std::vector<int64_t> Ancestors(int64_t id) {
    std::vector<int64_t> out;
    for (;;) {
      sqlite3_stmt* s = parent_.Bind(id);
      if (sqlite3_step(s) != SQLITE_ROW || sqlite3_column_type(s, 0) == SQLITE_NULL) break;
      id = sqlite3_column_int64(s, 0);
      out.push_back(id);
    }
    std::reverse(out.begin(), out.end());
    return out;
  }
  // In id order, as Perfetto lists them.
  std::vector<int64_t> Descendants(int64_t id) {
    std::vector<int64_t> out, pending{id};
    while (!pending.empty()) {
      const int64_t at = pending.back();
      pending.pop_back();
      sqlite3_stmt* s = children_.Bind(at);
      while (sqlite3_step(s) == SQLITE_ROW) {
        out.push_back(sqlite3_column_int64(s, 0));
        pending.push_back(out.back());
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  void AddSlice(int64_t id, Rows& rows) {
    sqlite3_stmt* s = slice_.Bind(id);
    if (sqlite3_step(s) == SQLITE_ROW) rows.Add(s);
  }
  // Flow rows leaving (or entering) a slice, in flow id order: (the row, the slice at its
  // other end).
  template <typename Visit>
  void Flows(int64_t slice, bool outgoing, Visit visit) {
    sqlite3_stmt* s = (outgoing ? outgoing_ : incoming_).Bind(slice);
    while (sqlite3_step(s) == SQLITE_ROW) visit(s, sqlite3_column_int64(s, outgoing ? 2 : 1));
  }

 private:
  Statement parent_, children_, slice_, outgoing_, incoming_;
};

enum class FlowWalk { kDirect, kFollowing, kPreceding };

// Perfetto's connected-flow search: breadth first from the slice, along flows (out, in or
// both), and for the following (preceding) flows through each reached slice's descendants
// (ancestors) as well.
void ConnectedFlows(SliceGraph& graph, int64_t start, FlowWalk walk, Rows& rows) {
  enum class Via { kStart, kIncoming, kOutgoing, kRelative };
  std::deque<std::pair<int64_t, Via>> queue{{start, Via::kStart}};
  std::unordered_set<int64_t> known{start};
  auto reach = [&](int64_t slice, Via via) {
    if (known.insert(slice).second) queue.emplace_back(slice, via);
  };
  while (!queue.empty()) {
    const auto [slice, via] = queue.front();
    queue.pop_front();
    if (via != Via::kRelative) {
      if (walk == FlowWalk::kPreceding)
        for (int64_t a : graph.Ancestors(slice)) reach(a, Via::kRelative);
      if (walk == FlowWalk::kFollowing)
        for (int64_t d : graph.Descendants(slice)) reach(d, Via::kRelative);
    }
    if (walk != FlowWalk::kFollowing && via != Via::kOutgoing)
      graph.Flows(slice, false, [&](sqlite3_stmt* row, int64_t other) {
        rows.Add(row);
        reach(other, Via::kIncoming);
      });
    if (walk != FlowWalk::kPreceding && via != Via::kIncoming)
      graph.Flows(slice, true, [&](sqlite3_stmt* row, int64_t other) {
        rows.Add(row);
        reach(other, Via::kOutgoing);
      });
  }
}

struct TableFunction {
  const char* name;
  const char* columns;
  int column_count;
  // Fills the rows for a start slice that exists.
  void (*run)(SliceGraph& graph, int64_t start, Rows& rows);
};

const TableFunction kTableFunctions[] = {
    {"ancestor_slice", kSliceColumns, 13,
     [](SliceGraph& g, int64_t start, Rows& rows) {
       for (int64_t id : g.Ancestors(start)) g.AddSlice(id, rows);
     }},
    {"descendant_slice", kSliceColumns, 13,
     [](SliceGraph& g, int64_t start, Rows& rows) {
       for (int64_t id : g.Descendants(start)) g.AddSlice(id, rows);
     }},
    {"directly_connected_flow", kFlowColumns, 5,
     [](SliceGraph& g, int64_t start, Rows& rows) {
       ConnectedFlows(g, start, FlowWalk::kDirect, rows);
     }},
    {"following_flow", kFlowColumns, 5,
     [](SliceGraph& g, int64_t start, Rows& rows) {
       ConnectedFlows(g, start, FlowWalk::kFollowing, rows);
     }},
    {"preceding_flow", kFlowColumns, 5,
     [](SliceGraph& g, int64_t start, Rows& rows) {
       ConnectedFlows(g, start, FlowWalk::kPreceding, rows);
     }},
};

thread_local bool declaring_table_function = false;

struct FunctionTable {
  sqlite3_vtab base{};
  const TableFunction* function = nullptr;
  sqlite3* db = nullptr;
  // Made by the first call and kept: a join calls the function once per row of the other side.
  std::unique_ptr<SliceGraph> graph;
};

struct FunctionCursor {
  sqlite3_vtab_cursor base{};
  Rows rows;
  size_t at = 0;
  int64_t start = 0;
};

int Connect(sqlite3* db, void* aux, int, const char* const*, sqlite3_vtab** out, char**) {
  const auto* function = static_cast<const TableFunction*>(aux);
  const std::string schema =
      std::string("CREATE TABLE x(") + function->columns + ", start_id HIDDEN)";
  declaring_table_function = true;
  const int rc = sqlite3_declare_vtab(db, schema.c_str());
  declaring_table_function = false;
  if (rc != SQLITE_OK) return rc;
  auto* table = new FunctionTable;
  table->function = function;
  table->db = db;
  *out = &table->base;
  return SQLITE_OK;
}

int Disconnect(sqlite3_vtab* vtab) {
  delete reinterpret_cast<FunctionTable*>(vtab);
  return SQLITE_OK;
}

// The argument is an equality constraint on the hidden column; without one (a bare
// `FROM ancestor_slice`) there is no plan.
int BestIndex(sqlite3_vtab* vtab, sqlite3_index_info* info) {
  const int hidden = reinterpret_cast<FunctionTable*>(vtab)->function->column_count;
  for (int i = 0; i < info->nConstraint; ++i) {
    const auto& c = info->aConstraint[i];
    if (c.iColumn != hidden || c.op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
    if (!c.usable) return SQLITE_CONSTRAINT;
    info->aConstraintUsage[i].argvIndex = 1;
    info->aConstraintUsage[i].omit = 1;
    info->idxNum = 1;
    info->estimatedCost = 10;
    info->estimatedRows = 10;
    return SQLITE_OK;
  }
  return SQLITE_CONSTRAINT;
}

int Open(sqlite3_vtab*, sqlite3_vtab_cursor** out) {
  *out = &(new FunctionCursor)->base;
  return SQLITE_OK;
}

int Close(sqlite3_vtab_cursor* cursor) {
  delete reinterpret_cast<FunctionCursor*>(cursor);
  return SQLITE_OK;
}

int Fail(sqlite3_vtab* vtab, const std::string& message) {
  sqlite3_free(vtab->zErrMsg);
  vtab->zErrMsg = sqlite3_mprintf("%s", message.c_str());
  return SQLITE_ERROR;
}

int Filter(sqlite3_vtab_cursor* base, int idx_num, const char*, int argc, sqlite3_value** argv) {
  auto* cursor = reinterpret_cast<FunctionCursor*>(base);
  auto* table = reinterpret_cast<FunctionTable*>(base->pVtab);
  cursor->rows.Clear();
  cursor->at = 0;
  if (idx_num != 1 || argc < 1 || sqlite3_value_type(argv[0]) == SQLITE_NULL) return SQLITE_OK;
  const std::string name = table->function->name;
  if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER)
    return Fail(base->pVtab, name + ": start id should be an integer.");
  cursor->start = sqlite3_value_int64(argv[0]);
  if (table->graph == nullptr) {
    auto graph = std::make_unique<SliceGraph>(table->db);
    if (std::string error = graph->error(); !error.empty()) {
      graph->Finalize();
      return Fail(base->pVtab, name + ": " + error);
    }
    table->graph = std::move(graph);
  }
  SliceGraph& graph = *table->graph;
  const bool exists = graph.Exists(cursor->start);
  if (exists) table->function->run(graph, cursor->start, cursor->rows);
  graph.Reset();
  if (!exists) return Fail(base->pVtab, name + ": no row with id " + std::to_string(cursor->start));
  return SQLITE_OK;
}

int Next(sqlite3_vtab_cursor* base) {
  ++reinterpret_cast<FunctionCursor*>(base)->at;
  return SQLITE_OK;
}

int Eof(sqlite3_vtab_cursor* base) {
  const auto* cursor = reinterpret_cast<FunctionCursor*>(base);
  return cursor->at >= cursor->rows.rows.size();
}

int Column(sqlite3_vtab_cursor* base, sqlite3_context* ctx, int column) {
  const auto* cursor = reinterpret_cast<FunctionCursor*>(base);
  const Row& row = cursor->rows.rows[cursor->at];
  if (static_cast<size_t>(column) < row.size()) {
    sqlite3_result_value(ctx, row[static_cast<size_t>(column)]);
  } else {
    sqlite3_result_int64(ctx, cursor->start);
  }
  return SQLITE_OK;
}

int RowId(sqlite3_vtab_cursor* base, sqlite3_int64* out) {
  *out = static_cast<sqlite3_int64>(reinterpret_cast<FunctionCursor*>(base)->at);
  return SQLITE_OK;
}

sqlite3_module MakeModule() {
  sqlite3_module m{};
  m.xCreate = nullptr;  // eponymous only: used by name, never CREATE VIRTUAL TABLE
  m.xConnect = Connect;
  m.xBestIndex = BestIndex;
  m.xDisconnect = Disconnect;
  m.xDestroy = Disconnect;
  m.xOpen = Open;
  m.xClose = Close;
  m.xFilter = Filter;
  m.xNext = Next;
  m.xEof = Eof;
  m.xColumn = Column;
  m.xRowid = RowId;
  return m;
}

const sqlite3_module kModule = MakeModule();

}  // namespace

bool DeclaringTableFunction() {
  return declaring_table_function;
}

Status RegisterPerfettoFunctions(sqlite3* db) {
  auto* extract = new ExtractArg;
  if (sqlite3_create_function_v2(db, "extract_arg", 2, SQLITE_UTF8, extract, ExtractArgFunction,
                                 nullptr, nullptr,
                                 [](void* p) { delete static_cast<ExtractArg*>(p); }) != SQLITE_OK)
    return Error{std::string("SQLite: cannot add extract_arg: ") + sqlite3_errmsg(db)};
  for (const TableFunction& f : kTableFunctions) {
    if (sqlite3_create_module_v2(db, f.name, &kModule, const_cast<TableFunction*>(&f), nullptr) !=
        SQLITE_OK)
      return Error{std::string("SQLite: cannot add ") + f.name + ": " + sqlite3_errmsg(db)};
  }
  return Status::Ok();
}

}  // namespace profsh::sqlite
