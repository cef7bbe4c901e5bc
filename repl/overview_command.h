// `profsh overview TRACE [--format table|csv] [--kernels N]`: the TensorBoard plugin's overview
// in the terminal: the step time breakdown with its average, the GPU summary, the top kernels and
// the recommendations (engine/analysis/tensorboard/overview.h).
#pragma once

namespace profsh::repl {

int RunOverviewCommand(int argc, char** argv);

}  // namespace profsh::repl
