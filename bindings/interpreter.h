// A Lua interpreter with the profsh module loaded, behind a C++ interface: the command line and
// the REPL drive Lua through this class and never touch the Lua C API themselves.
#pragma once

#include <memory>
#include <string>
#include <vector>

struct lua_State;

namespace profsh::lua {

// The Lua release this build runs ("Lua 5.4.4"), for `profsh --version`.
const char* LuaRelease();

class Interpreter {
 public:
  // Returns nullptr and sets *error when the interpreter cannot start.
  static std::unique_ptr<Interpreter> Create(std::string* error);
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // Sets the global `arg` as the lua interpreter does: arg[0] is the script, arg[1..] its
  // arguments, negative indices the interpreter and its options.
  void SetArgs(const std::vector<std::string>& before_script, const std::string& script,
               const std::vector<std::string>& script_args);

  // Runs a script file ("-" for standard input) or a chunk. Errors are printed to stderr as
  // "FILE:LINE: message" followed by a traceback; the return value is the exit status.
  int RunFile(const std::string& path, const std::vector<std::string>& script_args);
  int RunString(const std::string& chunk, const std::string& chunk_name);

  // REPL evaluation of one (possibly multi-line) input. Bare expressions print their values.
  enum class Eval { kOk, kIncomplete, kError };
  Eval Evaluate(const std::string& input, std::string* output);

  // Completion candidates for the Lua expression that ends at `cursor` in `line`.
  std::vector<std::string> Complete(const std::string& line, size_t cursor, size_t* word_start);

  std::string Help(const std::string& topic);

  // Makes the running chunk stop with an "interrupted" error at its next Lua instruction. Safe
  // to call from a signal handler.
  void Interrupt();

 private:
  Interpreter() = default;
  int Report(int status);
  int Docall(int nargs, int nresults);

  lua_State* L_ = nullptr;
};

}  // namespace profsh::lua
