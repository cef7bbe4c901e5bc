// `profsh summarize TRACE... -o OUT`: each trace's rank summary (engine/summary): one trace ->
// the file OUT; several -> OUT is a folder, one rank-R.summary.sqlite per rank.
#pragma once

namespace profsh::repl {

int RunSummarizeCommand(int argc, char** argv);

}  // namespace profsh::repl
