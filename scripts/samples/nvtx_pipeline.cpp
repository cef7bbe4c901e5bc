// A small training-loop-shaped program that announces its structure with NVTX, the way CUDA
// libraries and PyTorch's emit_nvtx do: iterations, forward and backward passes, layers with
// payloads, a worker pool that splits each layer into tiles, a data-loader thread in its own
// domain whose batches are start/end ranges that end on the main thread. It does real (CPU)
// arithmetic, so the times mean something. profsh's Quick start runs it:
//
//   profsh run -- build/nvtx_pipeline [ITERATIONS]
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace {

constexpr uint32_t kColorForward = 0xff4caf50, kColorBackward = 0xfff44336, kColorStep = 0xff2196f3;
enum Category : uint32_t { kCompute = 1, kData = 2 };

int PushRange(const char* name, uint32_t color, uint32_t category, int64_t payload) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = color;
  a.category = category;
  a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
  a.payload.llValue = payload;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  return nvtxRangePushEx(&a);
}

// A pool of workers that run tiles of a layer's work.
class WorkerPool {
 public:
  explicit WorkerPool(int n) {
    for (int i = 0; i < n; ++i) {
      threads_.emplace_back([this, i] {
        char name[32];
        std::snprintf(name, sizeof name, "worker %d", i);
        nvtxNameOsThreadA(static_cast<uint32_t>(syscall(SYS_gettid)), name);
        Work();
      });
    }
  }
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    ready_.notify_all();
    for (auto& t : threads_) t.join();
  }
  // Runs every task and waits for all of them.
  void RunAll(std::vector<std::function<void()>> tasks) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_ += static_cast<int>(tasks.size());
      for (auto& t : tasks) queue_.push_back(std::move(t));
    }
    ready_.notify_all();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
  }

 private:
  void Work() {
    while (true) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [this] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      task();
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0) done_.notify_all();
    }
  }
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable ready_, done_;
  std::deque<std::function<void()>> queue_;
  int pending_ = 0;
  bool stop_ = false;
};

// One tile of a matrix product: real work of a predictable size.
double Tile(int size, int seed) {
  nvtxRangePushA("matmul_tile");
  std::vector<double> a(size * size), b(size * size);
  for (int i = 0; i < size * size; ++i) {
    a[i] = (i * 7 + seed) % 13 * 0.1;
    b[i] = (i * 3 + seed) % 11 * 0.1;
  }
  double sum = 0;
  for (int i = 0; i < size; ++i)
    for (int k = 0; k < size; ++k)
      for (int j = 0; j < size; ++j) sum += a[i * size + k] * b[k * size + j];
  nvtxRangePop();
  return sum;
}

struct Layer {
  const char* name;
  int tiles;
  int tile_size;
};

const Layer kLayers[] = {{"layer1.conv", 8, 48},
                         {"layer2.conv", 8, 40},
                         {"layer3.attention", 12, 36},
                         {"layer4.mlp", 6, 56},
                         {"head.linear", 2, 32}};

std::atomic<double> g_checksum{0};

void RunLayer(WorkerPool& pool, const Layer& layer, int index, bool backward) {
  PushRange(layer.name, backward ? kColorBackward : kColorForward, kCompute, index);
  std::vector<std::function<void()>> tasks;
  int tiles = backward ? layer.tiles * 2 : layer.tiles;  // the backward pass does twice the work
  for (int t = 0; t < tiles; ++t) {
    tasks.push_back([&layer, t] {
      double v = Tile(layer.tile_size, t);
      double old = g_checksum.load();
      while (!g_checksum.compare_exchange_weak(old, old + v)) {
      }
    });
  }
  pool.RunAll(std::move(tasks));
  nvtxRangePop();
}

// The data loader: its own domain, one start/end range per batch that the main thread ends
// when it takes the batch.
class Loader {
 public:
  explicit Loader(int batches)
      : domain_(nvtxDomainCreateA("dataloader")), thread_([this, batches] { Run(batches); }) {}
  ~Loader() { thread_.join(); }
  nvtxRangeId_t Take() {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [this] { return !batches_.empty(); });
    nvtxRangeId_t id = batches_.front();
    batches_.pop_front();
    room_.notify_one();
    return id;
  }
  nvtxDomainHandle_t domain() const { return domain_; }

 private:
  void Run(int batches) {
    nvtxNameOsThreadA(static_cast<uint32_t>(syscall(SYS_gettid)), "data loader");
    nvtxStringHandle_t load = nvtxDomainRegisterStringA(domain_, "load batch");
    for (int b = 0; b < batches; ++b) {
      nvtxEventAttributes_t a{};
      a.version = NVTX_VERSION;
      a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
      a.category = kData;
      a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
      a.message.registered = load;
      a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT32;
      a.payload.uiValue = static_cast<uint32_t>(b);
      nvtxDomainRangePushEx(domain_, &a);
      double s = Tile(40, b);  // decoding and augmenting
      g_checksum.store(g_checksum.load() + s);
      nvtxDomainRangePop(domain_);
      a.messageType = NVTX_MESSAGE_TYPE_ASCII;
      a.message.ascii = "batch in flight";
      // At most kPrefetch batches ahead of the training loop, as real loaders prefetch.
      std::unique_lock<std::mutex> lock(mutex_);
      room_.wait(lock, [this] { return batches_.size() < kPrefetch; });
      nvtxRangeId_t id = nvtxDomainRangeStartEx(domain_, &a);
      batches_.push_back(id);
      ready_.notify_one();
    }
  }
  static constexpr size_t kPrefetch = 4;
  nvtxDomainHandle_t domain_;
  std::mutex mutex_;
  std::condition_variable ready_, room_;
  std::deque<nvtxRangeId_t> batches_;
  std::thread thread_;
};

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20;
  nvtxNameCategoryA(kCompute, "compute");
  nvtxNameCategoryA(kData, "data");
  nvtxNameOsThreadA(static_cast<uint32_t>(syscall(SYS_gettid)), "main");
  WorkerPool pool(4);
  Loader loader(iterations);
  for (int it = 0; it < iterations; ++it) {
    PushRange("iteration", 0xff9e9e9e, 0, it);
    nvtxRangeId_t batch = loader.Take();
    nvtxDomainRangeEnd(loader.domain(), batch);
    PushRange("forward", kColorForward, kCompute, it);
    for (int l = 0; l < static_cast<int>(std::size(kLayers)); ++l)
      RunLayer(pool, kLayers[l], l, false);
    nvtxRangePop();
    PushRange("backward", kColorBackward, kCompute, it);
    for (int l = static_cast<int>(std::size(kLayers)) - 1; l >= 0; --l)
      RunLayer(pool, kLayers[l], l, true);
    nvtxRangePop();
    PushRange("optimizer.step", kColorStep, kCompute, it);
    Tile(64, it);
    nvtxRangePop();
    if (it % 5 == 4) nvtxMarkA("checkpoint");
    nvtxRangePop();
  }
  std::printf("nvtx_pipeline: %d iterations, checksum %.3f\n", iterations, g_checksum.load());
  return 0;
}
