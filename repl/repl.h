// The interactive shell: reads chunks (a line editor on a terminal, plain lines otherwise),
// evaluates them in a Session, prints values and errors, and never lets an error end it.
#pragma once

#include "bindings/session.h"

namespace profsh::repl {

// Returns the exit status (0 after Ctrl-D or :quit).
int RunRepl(lua::Session& session);

}  // namespace profsh::repl
