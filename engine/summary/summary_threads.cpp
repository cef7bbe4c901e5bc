#include "engine/summary/summary_threads.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <vector>

namespace profsh {

Status ForEachFile(size_t n, const std::function<void(size_t)>& work, unsigned threads,
                   const StartThread& start) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  workers.reserve(std::min<size_t>(threads, n));  // push_back then cannot throw
  Status status;
  for (unsigned w = 0; w < threads && w < n; ++w) {
    try {
      workers.push_back(start([&] {
        for (size_t k = next++; k < n; k = next++) work(k);
      }));
    } catch (const std::exception& e) {  // std::system_error, std::bad_alloc
      // A joinable std::thread destroyed ends the process: stop handing out items and join.
      next = n;
      status = Error{"cannot start a thread to read " + std::to_string(n) + " summar" +
                     (n == 1 ? "y" : "ies") + " (" + std::to_string(workers.size()) +
                     " running): " + e.what()};
      break;
    }
  }
  for (std::thread& w : workers) w.join();
  return status;
}

Status ForEachFile(size_t n, const std::function<void(size_t)>& work) {
  const unsigned threads = std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
  return ForEachFile(n, work, threads,
                     [](std::function<void()> body) { return std::thread(std::move(body)); });
}

}  // namespace profsh
