// `profsh job map`: per-rank summaries of a distributed job's traces, made on a Dask cluster
// (--dask ADDRESS) or by local processes (--local N), one `profsh summarize` per rank.
#pragma once

namespace profsh::repl {

int RunJobCommand(int argc, char** argv);

}  // namespace profsh::repl
