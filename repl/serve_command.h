// `profsh serve LOGDIR [--port N] [--host ADDR]`: the web UI over a folder of traces.
#pragma once

namespace profsh::repl {

int RunServeCommand(int argc, char** argv);

}  // namespace profsh::repl
