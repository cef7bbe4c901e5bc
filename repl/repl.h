// The interactive shell: reads chunks (a line editor on a terminal, plain lines otherwise),
// evaluates them in an Interpreter, prints values and errors, and never lets an error end it.
#pragma once

#include "bindings/interpreter.h"

namespace profsh::repl {

// Returns the exit status (0 after Ctrl-D or :quit).
int RunRepl(lua::Interpreter& session);

}  // namespace profsh::repl
