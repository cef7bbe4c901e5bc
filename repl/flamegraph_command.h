// `profsh flamegraph`: flamegraph SVGs (and speedscope profiles) from folded stacks or traces,
// straight from the command line.
#pragma once

namespace profsh::repl {

int RunFlamegraphCommand(int argc, char** argv);

}  // namespace profsh::repl
