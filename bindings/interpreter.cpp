#include "bindings/interpreter.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>

#include "bindings/chunk_names.h"
#include "bindings/lua_api.h"
#include "bindings/lua_support.h"

namespace profsh::lua {

namespace {

void InterruptHook(lua_State* L, lua_Debug*) {
  lua_sethook(L, nullptr, 0, 0);
  luaL_error(L, "interrupted!");
}

int MessageHandler(lua_State* L) {
  const char* msg = lua_tostring(L, 1);
  if (msg == nullptr) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

int OpenAll(lua_State* L) {
  luaL_openlibs(L);
  OpenChunkNames(L);
  OpenProfsh(L);
  return 0;
}

bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

void CollectKeys(lua_State* L, int index, bool methods_only, const std::string& prefix,
                 std::set<std::string>* out) {
  index = lua_absindex(L, index);
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    if (lua_type(L, -2) == LUA_TSTRING) {
      std::string key = lua_tostring(L, -2);
      bool is_function = lua_type(L, -1) == LUA_TFUNCTION;
      if (key.rfind(prefix, 0) == 0 && (!methods_only || is_function) && key.rfind("__", 0) != 0) {
        out->insert(key);
      }
    }
    lua_pop(L, 1);
  }
}

// Pushes t[name] for the table at `index`, without metamethods: completion runs outside any
// protected call, where a raising __index would reach the panic handler.
int RawField(lua_State* L, int index, const char* name) {
  index = lua_absindex(L, index);
  lua_pushstring(L, name);
  return lua_rawget(L, index);
}

// Candidate names for `value.prefix` / `value:prefix`: table keys, plus the methods and fields
// a profsh userdata publishes in its metatable (__methods, __fields).
void CandidatesFor(lua_State* L, int index, bool methods_only, const std::string& prefix,
                   std::set<std::string>* out) {
  index = lua_absindex(L, index);
  if (lua_type(L, index) == LUA_TTABLE) CollectKeys(L, index, methods_only, prefix, out);
  if (lua_type(L, index) == LUA_TSTRING) {
    lua_pushglobaltable(L);
    if (RawField(L, -1, "string") == LUA_TTABLE) CollectKeys(L, -1, true, prefix, out);
    lua_pop(L, 2);
    return;
  }
  if (!lua_getmetatable(L, index)) return;
  if (RawField(L, -1, "__methods") == LUA_TTABLE) CollectKeys(L, -1, true, prefix, out);
  lua_pop(L, 1);
  if (!methods_only && RawField(L, -1, "__fields") == LUA_TTABLE) {
    const auto n = static_cast<lua_Integer>(lua_rawlen(L, -1));
    for (lua_Integer i = 1; i <= n; ++i) {
      if (lua_rawgeti(L, -1, i) == LUA_TSTRING) {
        std::string_view f = lua_tostring(L, -1);
        if (f.starts_with(prefix)) out->emplace(f);
      }
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
  if (RawField(L, -1, "__index") == LUA_TTABLE) CollectKeys(L, -1, methods_only, prefix, out);
  lua_pop(L, 2);
}

// Walks the path whose names are the arguments from the globals: raw reads for tables, the
// profsh field getters for userdata. Runs in a protected call, so that a getter that raises
// leaves Complete's strings alone; no user code runs. Returns the value, or nothing.
int ResolvePath(lua_State* L) {
  const int names = lua_gettop(L);
  lua_pushglobaltable(L);
  for (int i = 1; i <= names; ++i) {
    if (lua_type(L, -1) == LUA_TTABLE) {
      lua_pushvalue(L, i);
      lua_rawget(L, -2);
    } else if (lua_type(L, -1) == LUA_TUSERDATA &&
               luaL_getmetafield(L, -1, "__fields") != LUA_TNIL) {
      lua_pop(L, 1);
      lua_pushvalue(L, i);
      lua_gettable(L, -2);  // profsh userdata: __index is profsh's own getter
    } else {
      return 0;
    }
    lua_remove(L, -2);
  }
  return 1;
}

// profsh[name](argument), for a protected call: the user may have replaced or removed profsh.
int CallProfsh(lua_State* L) {
  lua_getglobal(L, "profsh");
  lua_pushvalue(L, 1);
  lua_gettable(L, -2);
  lua_pushvalue(L, 2);
  lua_call(L, 1, 1);
  return 1;
}

// luaL_tolstring in a protected call: a __tostring that raises must reach Evaluate as an error,
// not unwind through it or reach the panic handler.
int ToText(lua_State* L) {
  luaL_tolstring(L, 1, nullptr);
  return 1;
}

}  // namespace

const char* LuaRelease() {
  return LUA_RELEASE;
}

std::unique_ptr<Interpreter> Interpreter::Create(std::string* error) {
  std::unique_ptr<Interpreter> s(new Interpreter());
  s->L_ = luaL_newstate();
  if (s->L_ == nullptr) {
    *error = "cannot create the Lua state (out of memory)";
    return nullptr;
  }
  lua_pushcfunction(s->L_, OpenAll);
  if (lua_pcall(s->L_, 0, 0, 0) != LUA_OK) {
    *error = std::string("cannot load the profsh module: ") + lua_tostring(s->L_, -1);
    return nullptr;
  }
  return s;
}

Interpreter::~Interpreter() {
  if (L_ != nullptr) lua_close(L_);
}

void Interpreter::SetArgs(const std::vector<std::string>& before_script, const std::string& script,
                          const std::vector<std::string>& script_args) {
  lua_createtable(L_, static_cast<int>(script_args.size()),
                  static_cast<int>(before_script.size() + 1));
  for (size_t i = 0; i < before_script.size(); ++i) {
    lua_pushstring(L_, before_script[i].c_str());
    lua_rawseti(L_, -2, -static_cast<lua_Integer>(before_script.size() - i));
  }
  lua_pushstring(L_, script.c_str());
  lua_rawseti(L_, -2, 0);
  for (size_t i = 0; i < script_args.size(); ++i) {
    lua_pushstring(L_, script_args[i].c_str());
    lua_rawseti(L_, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setglobal(L_, "arg");
}

int Interpreter::Report(int status) {
  if (status != LUA_OK) {
    const char* msg = lua_tostring(L_, -1);
    std::fprintf(stderr, "%s\n",
                 msg ? RestoreChunkNames(L_, msg).c_str() : "(error without a message)");
    std::fflush(stderr);
    lua_pop(L_, 1);
    return 1;
  }
  return 0;
}

int Interpreter::Docall(int nargs, int nresults) {
  int base = lua_gettop(L_) - nargs;
  lua_pushcfunction(L_, MessageHandler);
  lua_insert(L_, base);
  int status = lua_pcall(L_, nargs, nresults, base);
  lua_remove(L_, base);
  return status;
}

int Interpreter::RunFile(const std::string& path, const std::vector<std::string>& script_args) {
  if (path != "-") RecordChunkName(L_, ("@" + path).c_str());
  int status = luaL_loadfile(L_, path == "-" ? nullptr : path.c_str());
  if (status != LUA_OK) return Report(status);
  for (const auto& a : script_args) lua_pushstring(L_, a.c_str());
  return Report(Docall(static_cast<int>(script_args.size()), 0));
}

int Interpreter::RunString(const std::string& chunk, const std::string& chunk_name) {
  int status = luaL_loadbuffer(L_, chunk.data(), chunk.size(), chunk_name.c_str());
  if (status == LUA_OK) status = Docall(0, 0);
  return Report(status);
}

Interpreter::Eval Interpreter::Evaluate(const std::string& input, std::string* output) {
  output->clear();
  int top = lua_gettop(L_);
  // First as an expression whose values are shown, then as statements.
  std::string as_return = "return " + input + ";";
  int status = luaL_loadbuffer(L_, as_return.data(), as_return.size(), "=stdin");
  if (status != LUA_OK) {
    lua_pop(L_, 1);
    status = luaL_loadbuffer(L_, input.data(), input.size(), "=stdin");
    if (status == LUA_ERRSYNTAX) {
      size_t len;
      const char* msg = lua_tolstring(L_, -1, &len);
      static const char kEof[] = "<eof>";
      bool incomplete =
          len >= sizeof(kEof) - 1 && std::strcmp(msg + len - (sizeof(kEof) - 1), kEof) == 0;
      if (incomplete) {
        lua_settop(L_, top);
        return Eval::kIncomplete;
      }
    }
    if (status != LUA_OK) {
      *output = RestoreChunkNames(L_, lua_tostring(L_, -1));
      lua_settop(L_, top);
      return Eval::kError;
    }
  }
  // No traceback here: in the shell the message says enough and keeps the screen readable.
  status = lua_pcall(L_, 0, LUA_MULTRET, 0);
  if (status != LUA_OK) {
    const char* msg = lua_tostring(L_, -1);
    *output = msg ? RestoreChunkNames(L_, msg) : "(error without a message)";
    lua_settop(L_, top);
    return Eval::kError;
  }
  int n = lua_gettop(L_) - top;
  for (int i = 1; i <= n; ++i) {
    int index = top + i;
    if (i > 1) output->push_back('\t');
    // Strings show as they are (a table's text is meant to be read); an averages list shows as
    // its table; anything else as profsh.repr renders it, or as tostring does if that fails.
    bool shown = false;
    if (!IsKeyAverages(L_, index) && lua_type(L_, index) != LUA_TSTRING) {
      lua_pushcfunction(L_, CallProfsh);
      lua_pushstring(L_, "repr");
      lua_pushvalue(L_, index);
      shown = lua_pcall(L_, 2, 1, 0) == LUA_OK && lua_type(L_, -1) == LUA_TSTRING;
      if (!shown) lua_pop(L_, 1);
    }
    if (!shown) {
      lua_pushcfunction(L_, ToText);
      lua_pushvalue(L_, index);
      if (lua_pcall(L_, 1, 1, 0) != LUA_OK) {
        const char* msg = lua_tostring(L_, -1);
        *output = msg ? msg : "(error without a message)";
        lua_settop(L_, top);
        return Eval::kError;
      }
    }
    size_t len;
    const char* text = lua_tolstring(L_, -1, &len);
    output->append(text, len);
    lua_pop(L_, 1);
  }
  if (n > 0 && (output->empty() || output->back() != '\n')) output->push_back('\n');
  lua_settop(L_, top);
  return Eval::kOk;
}

std::vector<std::string> Interpreter::Complete(const std::string& line, size_t cursor,
                                               size_t* word_start) {
  // The expression before the cursor: identifiers joined by '.' or ':'.
  size_t begin = cursor;
  while (begin > 0 &&
         (IsIdentChar(line[begin - 1]) || line[begin - 1] == '.' || line[begin - 1] == ':'))
    --begin;
  std::string expr = line.substr(begin, cursor - begin);
  size_t split = expr.find_last_of(".:");
  std::string prefix = split == std::string::npos ? expr : expr.substr(split + 1);
  *word_start = cursor - prefix.size();
  std::set<std::string> found;
  int top = lua_gettop(L_);
  if (split == std::string::npos) {
    lua_pushglobaltable(L_);
    CollectKeys(L_, -1, false, prefix, &found);
    static const char* kKeywords[] = {"and",   "break", "do",       "else", "elseif", "end",
                                      "false", "for",   "function", "goto", "if",     "in",
                                      "local", "nil",   "not",      "or",   "repeat", "return",
                                      "then",  "true",  "until",    "while"};
    for (const char* k : kKeywords) {
      if (std::string(k).rfind(prefix, 0) == 0) found.insert(k);
    }
  } else {
    bool methods_only = expr[split] == ':';
    std::string path = expr.substr(0, split);
    lua_pushcfunction(L_, ResolvePath);
    int names = 0;
    size_t pos = 0;
    bool ok = !path.empty();
    while (ok) {
      size_t next = path.find_first_of(".:", pos);
      std::string name =
          path.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
      ok = !name.empty() && lua_checkstack(L_, 1);
      if (!ok) break;
      lua_pushlstring(L_, name.data(), name.size());
      ++names;
      if (next == std::string::npos) break;
      pos = next + 1;
    }
    if (ok && lua_pcall(L_, names, 1, 0) == LUA_OK)
      CandidatesFor(L_, -1, methods_only, prefix, &found);
  }
  lua_settop(L_, top);
  return std::vector<std::string>(found.begin(), found.end());
}

std::string Interpreter::Help(const std::string& topic) {
  int top = lua_gettop(L_);
  lua_pushcfunction(L_, CallProfsh);
  lua_pushstring(L_, "help");
  lua_pushlstring(L_, topic.data(), topic.size());
  std::string text;
  if (lua_pcall(L_, 2, 1, 0) == LUA_OK && lua_type(L_, -1) == LUA_TSTRING)
    text = lua_tostring(L_, -1);
  lua_settop(L_, top);
  return text;
}

void Interpreter::Interrupt() {
  lua_sethook(L_, InterruptHook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT, 1);
}

}  // namespace profsh::lua
