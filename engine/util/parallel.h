// Splitting a large loop between the calling thread and one more, when the machine has a second
// core. Analyses over millions of events are a handful of such loops; two parts are what the
// machines profsh runs on have to spare, and what keeps each loop's merge step trivial.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>

namespace profsh {

// Below this many items a second thread costs more than it saves. Tests lower it, so that the
// two-part paths run (and are compared with the one-part ones) on small inputs.
inline std::atomic<size_t> parallel_min_items{size_t{1} << 20};

// How many parts RunInParts will use for `items`.
inline size_t PartsFor(size_t items) {
  static const unsigned cores = std::thread::hardware_concurrency();
  return items >= parallel_min_items.load(std::memory_order_relaxed) && cores >= 2 ? 2 : 1;
}

// [begin, end) of part `part` out of `parts` over `items`.
inline size_t PartBegin(size_t items, size_t part, size_t parts) {
  return items / parts * part;
}
inline size_t PartEnd(size_t items, size_t part, size_t parts) {
  return part + 1 == parts ? items : items / parts * (part + 1);
}

// Runs body(part) for part in [0, parts): the last part on a second thread, the others on this
// one. An exception thrown by any part (an allocation that fails) is rethrown here once both
// are done. Without a thread to spare, the parts run one after the other.
template <typename Body>
void RunInParts(size_t parts, Body&& body) {
  if (parts <= 1) {
    body(size_t{0});
    return;
  }
  std::exception_ptr helper_error;
  std::thread helper;
  try {
    helper = std::thread([&body, &helper_error, parts] {
      try {
        body(parts - 1);
      } catch (...) {
        helper_error = std::current_exception();
      }
    });
  } catch (const std::system_error&) {
    for (size_t p = 0; p < parts; ++p) body(p);
    return;
  }
  std::exception_ptr own_error;
  try {
    for (size_t p = 0; p + 1 < parts; ++p) body(p);
  } catch (...) {
    own_error = std::current_exception();
  }
  helper.join();
  if (own_error) std::rethrow_exception(own_error);
  if (helper_error) std::rethrow_exception(helper_error);
}

}  // namespace profsh
