// An ITT client for the collector's tests: two independent static parts (as two shared
// objects would have), objects created before the collector is loaded, tasks (with names made
// per call, as PyTorch's ITT wrapper does, and with a function address), frames, markers,
// counters, thread names, and pause/resume. The expected counts are in check_collector.py.
#include <thread>
#include <vector>

#include "scripts/samples/itt_static_part.h"

using P1 = itt_client::StaticPart<1>;
using P2 = itt_client::StaticPart<2>;
using itt_client::Id;

#define ITT_CALL(P, fn, ...)       \
  do {                             \
    if (P::fn) P::fn(__VA_ARGS__); \
  } while (0)

extern "C" __attribute__((noinline, visibility("default"))) void itt_task_function() {}

namespace {

const Id kNull{0, 0, 0};

void Task(itt_client::Domain* d, const char* name) {
  ITT_CALL(P1, task_begin, d, kNull, kNull, P1::string_handle_create(name));
  ITT_CALL(P1, task_end, d);
}

}  // namespace

int main() {
  P1::Setup();
  P2::Setup();
  // Before the collector is loaded: the static part's own objects (PyTorch creates its domain
  // in a static initializer).
  itt_client::Domain* torch = P1::domain_create("PyTorch");
  itt_client::StringHandle* conv = P1::string_handle_create("aten::conv2d");
  itt_client::Counter depth = P1::counter_create("queue depth", "PyTorch");

  for (int i = 0; i < 10; ++i) {  // the first call loads the collector
    ITT_CALL(P1, task_begin, torch, kNull, kNull, conv);
    Task(torch, "aten::relu");
    ITT_CALL(P1, task_end, torch);
  }
  ITT_CALL(P1, thread_set_name, "itt main");
  Id id{42, 7, 0}, parent{1, 0, 0};
  ITT_CALL(P1, task_begin, torch, id, parent, P1::string_handle_create("task with ids"));
  ITT_CALL(P1, task_end, torch);
  ITT_CALL(P1, task_begin_fn, torch, kNull, kNull, reinterpret_cast<void*>(&itt_task_function));
  ITT_CALL(P1, task_end, torch);
  for (int i = 0; i < 3; ++i) {
    ITT_CALL(P1, frame_begin_v3, torch, nullptr);
    Task(torch, "inside frame");
    ITT_CALL(P1, frame_end_v3, torch, nullptr);
  }
  ITT_CALL(P1, marker, torch, kNull, P1::string_handle_create("checkpoint"), 2);
  ITT_CALL(P1, marker, torch, kNull, P1::string_handle_create("checkpoint"), 2);

  unsigned long long five = 5;
  ITT_CALL(P1, counter_set_value, depth, &five);
  ITT_CALL(P1, counter_inc, depth);
  ITT_CALL(P1, counter_dec, depth);
  itt_client::Counter loss = P1::counter_create_typed("loss", "PyTorch", itt_client::kMetaDouble);
  double l1 = 0.5, l2 = 0.25;
  ITT_CALL(P1, counter_set_value, loss, &l1);
  ITT_CALL(P1, counter_set_value, loss, &l2);

  // Paused time records nothing, but a task opened before the pause still ends.
  ITT_CALL(P1, task_begin, torch, kNull, kNull, P1::string_handle_create("open across pause"));
  ITT_CALL(P1, pause);
  for (int i = 0; i < 5; ++i) Task(torch, "hidden while paused");
  ITT_CALL(P1, task_end, torch);
  ITT_CALL(P1, resume);
  for (int i = 0; i < 3; ++i) Task(torch, "after resume");

  // A second static part, as another shared object (oneDNN) would have.
  itt_client::Domain* dnnl = P2::domain_create("oneDNN");
  for (int i = 0; i < 4; ++i) {
    ITT_CALL(P2, task_begin, dnnl, kNull, kNull, P2::string_handle_create("dnnl_primitive"));
    ITT_CALL(P2, task_end, dnnl);
  }

  std::vector<std::thread> workers;
  for (int t = 0; t < 2; ++t) {
    workers.emplace_back([torch] {
      for (int i = 0; i < 100; ++i) Task(torch, "worker task");
    });
  }
  for (auto& w : workers) w.join();
  return 0;
}
