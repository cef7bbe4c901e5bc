// `profsh run [options] -- CMD [ARGS...]`: runs an unmodified workload under the collector,
// prints its key_averages table and saves the trace. Exits with the workload's status.
#pragma once

namespace profsh::repl {

int RunRunCommand(int argc, char** argv);

}  // namespace profsh::repl
