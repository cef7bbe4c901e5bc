// Writes a synthetic Kineto trace of about the requested size, shaped like the real GPU traces in
// ../shared/traces (newer Kineto layout: one field group per line, relative timestamps with a
// nanosecond fraction, baseTimeNanoseconds at the end). Per training-step-like iteration it emits
// nested cpu_op ranges with shapes, types and sequence numbers, cudaLaunchKernel runtime calls with
// ac2g flows to kernels on two streams, memcpys, fwdbwd flows and [memory] instants; with
// COLLECTIVES, that many all-reduces at the end of each step, as torch writes them
// (record_param_comms with the collective's group, name, Seq, sizes and dtype, launching an NCCL
// kernel with the same arguments on stream 21); every rank numbers them the same way.
//
//   gen_kineto_trace OUT.json SIZE_MB [SEED] [RANK] [COLLECTIVES]
//   (RANK: its distributedInfo rank, default 0; COLLECTIVES per step, default 0)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

const char* kOps[] = {"aten::addmm",
                      "aten::mm",
                      "aten::bmm",
                      "aten::conv2d",
                      "aten::convolution",
                      "aten::_convolution",
                      "aten::cudnn_convolution",
                      "aten::relu",
                      "aten::add",
                      "aten::mul",
                      "aten::softmax",
                      "aten::_softmax",
                      "aten::layer_norm",
                      "aten::native_layer_norm",
                      "aten::dropout",
                      "aten::linear",
                      "aten::matmul",
                      "aten::copy_",
                      "aten::to",
                      "aten::_to_copy",
                      "aten::empty",
                      "aten::zeros",
                      "aten::view",
                      "aten::transpose",
                      "aten::reshape",
                      "aten::cat",
                      "aten::sum",
                      "aten::gelu",
                      "aten::embedding",
                      "aten::index_select"};
const char* kKernelStems[] = {
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3>)",
    "ampere_sgemm_128x64_tn",
    "ampere_sgemm_64x32_sliced1x4_nn",
    "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 32, true, 1>(float, float, float, "
    "float, "
    "cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, float*, "
    "float const*, float*, float*, float const*, float const*, float)",
    "void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 4, 64, 64>("
    "float*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<float, unsigned int, 64, "
    "64>, "
    "at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<"
    "float, at::native::sum_functor<float, float, "
    "float>::operator()(at::TensorIterator&)::{lambda(float, "
    "float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, "
    "at::native::func_wrapper_t<float, "
    "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, "
    "float)#1}>, unsigned int, float, 4>)",
    "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_"
    "kernel",
    "void at::native::elementwise_kernel<128, 2, "
    "at::native::gpu_kernel_impl<at::native::direct_copy_"
    "kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() "
    "const::{lambda()#7}::operator()() "
    "const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::"
    "TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() "
    "const::{lambda("
    "float)#1} const&)::{lambda(int)#1}>(int, "
    "at::native::gpu_kernel_impl<at::native::direct_copy_kernel"
    "_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() "
    "const::"
    "{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::"
    "TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() "
    "const::{lambda("
    "float)#1} const&)::{lambda(int)#1})"};
const char* kShapes[] = {"[[512], [512, 1408], [1408, 512], [], []]",
                         "[[32, 128, 768], [768, 768]]",
                         "[[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], [], [], []]",
                         "[[32, 64, 56, 56]]",
                         "[[4096, 1024], [1024, 4096]]",
                         "[[32, 128, 768]]",
                         "[[], [], [], [], []]",
                         "[[32, 12, 128, 128], [], []]"};
const char* kTypes[] = {
    "[\"float\", \"float\", \"float\", \"Scalar\", \"Scalar\"]", "[\"float\", \"float\"]",
    "[\"c10::Half\", \"c10::Half\", \"\", \"ScalarList\", \"ScalarList\", \"ScalarList\", "
    "\"Scalar\", \"ScalarList\", \"Scalar\"]",
    "[\"float\"]"};

class Writer {
 public:
  explicit Writer(FILE* f) : f_(f) {}
  void Raw(const std::string& s) {
    std::fwrite(s.data(), 1, s.size(), f_);
    bytes_ += s.size();
  }
  size_t bytes() const { return bytes_; }

 private:
  FILE* f_;
  size_t bytes_ = 0;
};

std::string Ts(int64_t ns) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%lld.%03lld", static_cast<long long>(ns / 1000),
                static_cast<long long>(ns % 1000));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s OUT.json SIZE_MB [SEED] [RANK] [COLLECTIVES]\n", argv[0]);
    return 2;
  }
  const size_t target = static_cast<size_t>(std::atof(argv[2]) * 1024 * 1024);
  std::mt19937_64 rng(argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 42);
  FILE* f = std::fopen(argv[1], "wb");
  if (f == nullptr) {
    std::perror(argv[1]);
    return 1;
  }
  std::vector<char> buffer(1 << 22);
  std::setvbuf(f, buffer.data(), _IOFBF, buffer.size());
  Writer w(f);
  const long rank = argc > 4 ? std::strtol(argv[4], nullptr, 10) : 0;
  const long collectives = argc > 5 ? std::strtol(argv[5], nullptr, 10) : 0;
  w.Raw(
      "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\n      \"id\": 0, \"name\": "
      "\"NVIDIA A100-SXM4-80GB\", "
      "\"totalGlobalMem\": 85051572224,\n      \"computeMajor\": 8, \"computeMinor\": 0,\n      "
      "\"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n      "
      "\"regsPerBlock\": 65536, "
      "\"regsPerMultiprocessor\": 65536, \"warpSize\": 32,\n      \"sharedMemPerBlock\": 49152, "
      "\"sharedMemPerMultiprocessor\": 167936,\n      \"numSms\": 108, \"sharedMemPerBlockOptin\": "
      "166912\n    }\n  ],\n");
  char info[128];
  std::snprintf(
      info, sizeof(info),
      "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %ld, \"world_size\": %ld},\n  ",
      rank, std::max(8L, rank + 1));
  w.Raw(info);
  w.Raw("\"traceEvents\": [\n");
  const int pid = 2910249, tid = 2910249, bwd_tid = 2919752;
  int64_t now = 4458676416431000;  // relative ns, as newer Kineto writes
  int64_t gpu_now = now;
  uint64_t ext = 1, corr = 50000, ev_idx = 0, seq = 1000, seq_comm = 0;
  size_t events = 0;
  bool first = true;
  auto emit = [&](const std::string& body) {
    w.Raw(first ? "  {\n" : ",\n  {\n");
    first = false;
    w.Raw(body);
    w.Raw("\n  }");
    ++events;
  };
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  int64_t step = 0;
  while (w.bytes() < target) {
    // One iteration: a ProfilerStep annotation around ~40 top-level ops.
    int64_t step_start = now;
    std::vector<std::string> step_body;
    int64_t t = now + 5000;
    for (int op = 0; op < 40 && w.bytes() < target; ++op) {
      bool backward = op >= 25;
      int thread = backward ? bwd_tid : tid;
      int64_t op_start = t;
      int depth = 1 + static_cast<int>(pick(3));
      int64_t child_t = op_start + 2000 + static_cast<int64_t>(pick(3000));
      std::string children;
      for (int d = 0; d < depth; ++d) {
        uint64_t my_ext = ext++;
        uint64_t my_corr = corr++;
        int64_t rt_start = child_t + 1500;
        int64_t rt_dur = 4000 + static_cast<int64_t>(pick(3000));
        int64_t dur = 9000 + static_cast<int64_t>(pick(20000));
        // Like real models, an operator is called with a few shapes, not with any shape.
        size_t op_index = pick(std::size(kOps));
        size_t variant = op_index * 7 + pick(2);
        emit("    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" + std::string(kOps[op_index]) +
             "\", \"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(thread) +
             ",\n    \"ts\": " + Ts(child_t) + ", \"dur\": " + Ts(dur) +
             ",\n    \"args\": {\n      \"External id\": " + std::to_string(my_ext) +
             ",\"Record function id\": 0, \"Sequence number\": " + std::to_string(seq++) +
             ", \"Fwd thread id\": 1, \"Input type\": " + kTypes[variant % std::size(kTypes)] +
             ", \"Input Dims\": " + kShapes[variant % std::size(kShapes)] +
             ", \"Ev Idx\": " + std::to_string(ev_idx++) + "\n    }");
        emit(
            "    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
            "\"pid\": " +
            std::to_string(pid) + ", \"tid\": " + std::to_string(thread) +
            ",\n    \"ts\": " + Ts(rt_start) + ", \"dur\": " + Ts(rt_dur) +
            ",\n    \"args\": {\n      \"External id\": " + std::to_string(my_ext) +
            ",  \"cbid\": 211, \"correlation\": " + std::to_string(my_corr) + "\n    }");
        emit("    \"ph\": \"s\", \"id\": " + std::to_string(my_corr) +
             ", \"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(thread) +
             ", \"ts\": " + Ts(rt_start) + ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"");
        gpu_now = std::max(gpu_now, rt_start + 3000) + static_cast<int64_t>(pick(2000));
        int64_t kdur = 2000 + static_cast<int64_t>(pick(200000));
        int stream = pick(5) == 0 ? 20 : 7;
        bool memcpy = pick(12) == 0;
        if (memcpy) {
          emit(
              "    \"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoD (Device -> "
              "Device)\", \"pid\": 0, "
              "\"tid\": " +
              std::to_string(stream) + ",\n    \"ts\": " + Ts(gpu_now) +
              ", \"dur\": " + Ts(kdur / 10) +
              ",\n    \"args\": {\n      \"External id\": " + std::to_string(my_ext) +
              ",  \"device\": 0, \"context\": 1,\n      \"stream\": " + std::to_string(stream) +
              ", \"correlation\": " + std::to_string(my_corr) + ",\n      \"bytes\": " +
              std::to_string(4096 * (1 + pick(4096))) + ", \"memory bandwidth (GB/s)\": " +
              std::to_string(100.0 + static_cast<double>(pick(100000)) / 97.0) + "\n    }");
        } else {
          emit("    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" +
               std::string(kKernelStems[pick(std::size(kKernelStems))]) +
               "\", \"pid\": 0, \"tid\": " + std::to_string(stream) +
               ",\n    \"ts\": " + Ts(gpu_now) + ", \"dur\": " + Ts(kdur) +
               ",\n    \"args\": {\n      \"External id\": " + std::to_string(my_ext) +
               ",\n      \"queued\": 0, \"device\": 0, \"context\": 1,\n      \"stream\": " +
               std::to_string(stream) + ", \"correlation\": " + std::to_string(my_corr) +
               ",\n      \"registers per thread\": 40,\n      "
               "\"shared memory\": 400,\n      \"blocks per SM\": 4.740741,\n      \"warps per "
               "SM\": 75.851852,\n      "
               "\"grid\": [512, 1, 1],\n      \"block\": [512, 1, 1],\n      \"est. achieved "
               "occupancy %\": 100\n    }");
        }
        emit("    \"ph\": \"f\", \"id\": " + std::to_string(my_corr) +
             ", \"pid\": 0, \"tid\": " + std::to_string(stream) + ", \"ts\": " + Ts(gpu_now) +
             ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"");
        gpu_now += memcpy ? kdur / 10 : kdur;
        if (pick(6) == 0) {
          emit(
              "    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": "
              "\"[memory]\",\n    \"pid\": " +
              std::to_string(pid) + ", \"tid\": " + std::to_string(thread) +
              ",\n    \"ts\": " + Ts(child_t + 800) +
              ",\n    \"args\": {\n      \"Device Type\": 1, \"Device Id\": 0, \"Addr\": " +
              std::to_string(139637000000000ull + rng() % 1000000000ull * 512) + ", \"Bytes\": " +
              std::to_string((pick(2) ? 1 : -1) * static_cast<int64_t>(512 * (1 + pick(100000)))) +
              ", \"Total Allocated\": " + std::to_string(5000000000ull + pick(1000000000)) +
              ", \"Total Reserved\": 12782141440\n    }");
        }
        child_t += 500;
      }
      if (backward && pick(4) == 0) {
        emit("    \"ph\": \"s\", \"id\": " + std::to_string(seq) +
             ", \"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(tid) +
             ", \"ts\": " + Ts(op_start) + ",\n    \"cat\": \"fwdbwd\", \"name\": \"fwdbwd\"");
        emit("    \"ph\": \"f\", \"id\": " + std::to_string(seq) +
             ", \"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(bwd_tid) +
             ", \"ts\": " + Ts(op_start + 100) +
             ",\n    \"cat\": \"fwdbwd\", \"name\": \"fwdbwd\", \"bp\": \"e\"");
      }
      t = child_t + 40000 + static_cast<int64_t>(pick(20000));
    }
    for (long c = 0; c < collectives && w.bytes() < target; ++c) {
      // Drawn from no random numbers: traces without collectives stay as they were.
      uint64_t my_ext = ext++;
      uint64_t my_corr = corr++;
      const int64_t nelems = 1 << (20 + c % 4);
      const std::string comm =
          ", \"Collective name\": \"allreduce\", \"Process Group Name\": \"0\", "
          "\"Seq\": " +
          std::to_string(seq_comm++) + ", \"In msg nelems\": " + std::to_string(nelems) +
          ", \"Out msg nelems\": " + std::to_string(nelems) + ", \"dtype\": \"Float\"";
      emit("    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": " +
           std::to_string(pid) + ", \"tid\": " + std::to_string(tid) + ",\n    \"ts\": " + Ts(t) +
           ", \"dur\": " + Ts(12000) + ",\n    \"args\": {\n      \"External id\": " +
           std::to_string(my_ext) + comm + "\n    }");
      emit(
          "    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
          "\"pid\": " +
          std::to_string(pid) + ", \"tid\": " + std::to_string(tid) +
          ",\n    \"ts\": " + Ts(t + 2000) + ", \"dur\": " + Ts(5000) +
          ",\n    \"args\": {\n      \"External id\": " + std::to_string(my_ext) +
          ",  \"cbid\": 211, \"correlation\": " + std::to_string(my_corr) + "\n    }");
      gpu_now = std::max(gpu_now, t + 8000);
      const int64_t kdur = 50000 + 20000 * (c % 4);
      emit(
          "    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
          "\"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)\", "
          "\"pid\": 0, \"tid\": 21,\n    \"ts\": " +
          Ts(gpu_now) + ", \"dur\": " + Ts(kdur) +
          ",\n    \"args\": {\n      \"External id\": " + std::to_string(my_ext) +
          ", \"device\": 0, \"context\": 1, \"stream\": 21, \"correlation\": " +
          std::to_string(my_corr) + comm + "\n    }");
      gpu_now += kdur;
      t += 15000;
    }
    emit("    \"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#" +
         std::to_string(step++) + "\", \"pid\": " + std::to_string(pid) +
         ", \"tid\": " + std::to_string(tid) + ",\n    \"ts\": " + Ts(step_start) +
         ", \"dur\": " + Ts(t - step_start) + ",\n    \"args\": {\n      \"External id\": " +
         std::to_string(ext++) + ",\"Ev Idx\": " + std::to_string(ev_idx++) + "\n    }");
    now = t + 10000;
  }
  w.Raw(
      "\n  ],\n  \"traceName\": \"synthetic.pt.trace.json\",\n  \"displayTimeUnit\": \"ms\",\n"
      "  \"baseTimeNanoseconds\": 1711964646000000000\n}\n");
  std::fclose(f);
  std::fprintf(stderr, "wrote %s: %zu bytes, %zu events\n", argv[1], w.bytes(), events);
  return 0;
}
