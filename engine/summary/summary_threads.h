// Reading a job's summary files a few at a time, each thread with its own SQLite connection.
#pragma once

#include <cstddef>
#include <functional>
#include <thread>

#include "engine/util/result.h"

namespace profsh {

// Starts one reading thread. Tests give one that throws std::system_error, as std::thread does
// when the process is out of threads or memory.
using StartThread = std::function<std::thread(std::function<void()>)>;

// Calls work(k) for every k in [0, n) on up to `threads` threads. When a thread cannot be
// started (std::system_error, std::bad_alloc), no further item is begun, the threads already
// running finish the item they hold and are joined, and the error is returned (some items then
// were not done). `work` must not throw.
Status ForEachFile(size_t n, const std::function<void(size_t)>& work, unsigned threads,
                   const StartThread& start);

// The same on up to 8 threads, one per core, started with std::thread.
Status ForEachFile(size_t n, const std::function<void(size_t)>& work);

}  // namespace profsh
