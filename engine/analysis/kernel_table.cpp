#include "engine/analysis/kernel_table.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "engine/analysis/model/event_model.h"

namespace profsh {

const std::vector<std::string>& DefaultTensorCorePatterns() {
  static const std::vector<std::string> patterns = {
      "h884", "s884", "h1688", "s1688", "hmma", "i8816", "16816", "dgrad_1x1_stride_2x2",
      "first_layer_wgrad_kernel", "conv1x1", "conv2d_c1_k1", "direct_group", "xmma_implicit_gemm",
      "xmma_sparse_conv", "xmma_warp_specialized_implicit_gemm", "xmma_gemm", "xmma_sparse_gemm",
      "c1688",
      // Ampere and Hopper names PyProf predates.
      "tensorop", "_s16816", "_h16816", "gmma", "wgmma", "hgmma", "sm90_xmma", "sm80_xmma"};
  return patterns;
}

namespace {

using Shape = std::vector<int64_t>;

int64_t ElementSize(const std::string& type) {
  if (type == "double" || type == "long int" || type == "long" || type == "c10::complex<float>")
    return 8;
  if (type == "c10::Half" || type == "c10::BFloat16" || type == "short int") return 2;
  if (type == "bool" || type == "signed char" || type == "unsigned char" ||
      type.find("Float8") != std::string::npos)
    return 1;
  if (type == "c10::complex<double>") return 16;
  return 4;  // float, int
}

int64_t Numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

Shape Broadcast(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t k = 0; k < out.size(); ++k) {
    int64_t da = k < out.size() - a.size() ? 1 : a[k - (out.size() - a.size())];
    int64_t db = k < out.size() - b.size() ? 1 : b[k - (out.size() - b.size())];
    out[k] = std::max(da, db);
  }
  return out;
}

struct Cost {
  int64_t flops = 0, bytes = 0;
  bool tensor_core_eligible = false;  // gemm and conv: tc is 1 or 0; elsewhere "-"
};

bool OneOf(std::string_view op, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), op) != names.end();
}

// PyProf's algorithmic FLOPs and bytes (pyprof/prof/blas.py, conv.py, pointwise.py), from the
// operator's input shapes and types; nullopt when profsh does not know the operator.
std::optional<Cost> OperatorCost(std::string_view op, const std::vector<std::optional<Shape>>& dims,
                                 const std::vector<std::string>& types) {
  if (op.rfind("aten::", 0) == 0) op.remove_prefix(6);
  auto shape = [&](size_t k) -> const Shape* {
    return k < dims.size() && dims[k] ? &*dims[k] : nullptr;
  };
  const int64_t size = types.empty() ? 4 : ElementSize(types[0]);
  auto gemm = [&](int64_t batch, int64_t m, int64_t n, int64_t k) {
    return Cost{2 * batch * m * n * k, size * batch * (m * n + m * k + n * k), true};
  };
  if (OneOf(op, {"mm", "addmm", "bmm", "baddbmm", "matmul", "linear"})) {
    size_t first = (op == "addmm" || op == "baddbmm") ? 1 : 0;
    const Shape *a = shape(first), *b = shape(first + 1);
    if (!a || !b || a->empty() || b->empty()) return std::nullopt;
    if (op == "linear") {  // input [..., K], weight [N, K]
      if (b->size() != 2) return std::nullopt;
      return gemm(1, Numel(*a) / a->back(), (*b)[0], a->back());
    }
    if (a->size() < 2 || b->size() < 2) return std::nullopt;
    int64_t batch = Numel(Shape(a->begin(), a->end() - 2));
    return gemm(std::max<int64_t>(batch, 1), (*a)[a->size() - 2], b->back(), a->back());
  }
  if (OneOf(op,
            {"convolution", "_convolution", "conv2d", "cudnn_convolution", "conv1d", "conv3d"})) {
    const Shape *x = shape(0), *w = shape(1);
    if (!x || !w || x->size() < 3 || w->size() != x->size()) return std::nullopt;
    // Output spatial size with stride 1, no padding: the trace's shapes do not say more.
    int64_t n = (*x)[0], c = (*x)[1], k = (*w)[0], cg = (*w)[1];
    int64_t out = 1, in = 1, filter = 1;
    for (size_t d = 2; d < x->size(); ++d) {
      in *= (*x)[d];
      filter *= (*w)[d];
      out *= std::max<int64_t>((*x)[d] - (*w)[d] + 1, 1);
    }
    return Cost{2 * n * k * out * cg * filter, size * (n * c * in + k * cg * filter + n * k * out),
                true};
  }
  const Shape* a = shape(0);
  if (!a) return std::nullopt;
  const int64_t numel = Numel(*a);
  if (OneOf(op, {"exp", "log", "sin", "cos", "tan", "sqrt", "rsqrt", "erf", "tanh", "sigmoid",
                 "gelu", "silu", "pow", "exp_", "log_", "sqrt_", "tanh_", "sigmoid_"}))
    return Cost{20 * numel, 2 * size * numel, false};
  if (OneOf(op, {"relu", "relu_", "neg", "abs", "clamp", "clamp_", "threshold", "threshold_",
                 "fill_", "zero_", "copy_", "dropout", "native_dropout", "reciprocal", "sign",
                 "leaky_relu", "hardtanh", "hardtanh_"}))
    return Cost{numel, 2 * size * numel, false};
  if (OneOf(op, {"add",     "add_",    "sub",      "sub_",    "mul",      "mul_", "div",  "div_",
                 "maximum", "minimum", "eq",       "ne",      "lt",       "le",   "gt",   "ge",
                 "where",   "addcmul", "addcmul_", "addcdiv", "addcdiv_", "lerp", "lerp_"})) {
    Shape out = *a;
    int64_t in_bytes = size * numel;
    for (size_t k = 1; k < dims.size(); ++k) {
      if (!dims[k]) continue;
      out = Broadcast(out, *dims[k]);
      in_bytes += size * Numel(*dims[k]);
    }
    bool comparison = OneOf(op, {"eq", "ne", "lt", "le", "gt", "ge"});
    int64_t ternary =
        OneOf(op, {"where", "addcmul", "addcmul_", "addcdiv", "addcdiv_", "lerp", "lerp_"}) ? 3 : 1;
    return Cost{ternary * Numel(out), in_bytes + (comparison ? 1 : size) * Numel(out), false};
  }
  if (OneOf(op, {"sum", "mean", "amax", "max", "min", "norm", "softmax", "_softmax", "log_softmax",
                 "_log_softmax", "layer_norm", "native_layer_norm", "batch_norm",
                 "native_batch_norm", "cudnn_batch_norm"}))
    return Cost{numel, 2 * size * numel, false};
  return std::nullopt;
}

// The model's inputs as PyProf reads them: a tensor's sizes; nothing for a list or other value.
std::vector<std::optional<Shape>> TensorShapes(const std::vector<InputShape>* inputs) {
  std::vector<std::optional<Shape>> out;
  if (inputs == nullptr) return out;
  for (const InputShape& in : *inputs)
    out.push_back(in.kind == InputShape::Kind::kSizes ? std::optional<Shape>(in.sizes)
                                                      : std::nullopt);
  return out;
}

std::string ShapesText(const std::vector<std::optional<Shape>>& dims,
                       const std::vector<std::string>& types) {
  std::string out;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (!dims[k] || dims[k]->empty()) continue;
    if (!out.empty()) out += ";";
    out += "(";
    for (size_t d = 0; d < dims[k]->size(); ++d) {
      if (d) out += ',';
      out += std::to_string((*dims[k])[d]);
    }
    out += ")";
    if (k < types.size()) out += types[k];
  }
  return out;
}

}  // namespace

AnalysisRows KernelTable(const Trace& trace, const KernelTableOptions& options) {
  AnalysisRows rows;
  rows.columns = {"idx",    "seq",   "dir",    "sub",    "layer",        "op",   "kernel",
                  "params", "sil",   "tc",     "device", "stream",       "grid", "block",
                  "flops",  "bytes", "tflops", "gbps",   "flop_per_byte"};
  const EventTable& ev = trace.events;
  const EventModel& model = ModelOf(trace);
  const EventIds& ids = model.ids();
  const TypedArgs& args = model.args();
  // Kernels, in start order.
  std::vector<uint32_t> kernels;
  for (size_t k = 0; k < ids.device_work.size(); ++k)
    if (model.role(ids.device_work.event[k]).work == DeviceWorkKind::kKernel)
      kernels.push_back(static_cast<uint32_t>(k));
  if (kernels.empty()) {
    rows.notes.push_back("the trace has no kernels");
    return rows;
  }
  std::stable_sort(kernels.begin(), kernels.end(), [&](uint32_t a, uint32_t b) {
    return ev.ts(ids.device_work.event[a]) < ev.ts(ids.device_work.event[b]);
  });
  auto range_event = [&](uint32_t r) { return ids.ranges.event[r]; };
  auto range_is_op = [&](uint32_t r) {
    return model.role(range_event(r)).role == EventRole::kCpuOp;
  };
  auto sequence = [&](uint32_t r) { return args.Int(range_event(r), KnownArg::kSequenceNumber); };
  std::unordered_map<uint32_t, int64_t> kernels_of_op;  // range index -> kernels seen so far
  size_t unlinked = 0;
  std::vector<uint32_t> around;
  for (size_t idx = 0; idx < kernels.size(); ++idx) {
    const uint32_t k = kernels[idx];
    const uint32_t kernel_event = ids.device_work.event[k];
    // PyProf's rule: the first runtime call with the kernel's correlation, and the ranges open
    // on its thread when it started.
    around.clear();
    const uint32_t call = FirstCandidate(model.links().RuntimeCandidates(k));
    if (call != kNoIndex) model.EnclosingRanges(call, &around);
    std::optional<uint32_t> op;
    std::string layer;
    bool backward = false;
    for (uint32_t r : around) {
      std::string_view name = trace.str(ev.name(range_event(r)));
      if (name.find("evaluate_function") != std::string_view::npos ||
          name.find("Backward") != std::string_view::npos)
        backward = true;
      if (range_is_op(r)) {
        op = r;
      } else if (name.rfind("ProfilerStep#", 0) != 0) {
        if (!layer.empty()) layer += ':';
        layer += name;
      }
    }
    if (!op) ++unlinked;
    std::vector<Cell> row{Cell::Int(static_cast<int64_t>(idx))};
    std::vector<std::optional<Shape>> dims;
    std::vector<std::string> types;
    if (op) {
      const uint32_t e = range_event(*op);
      auto seq = sequence(*op);
      // The sequence number of the innermost operator that has one (torch gives it to the
      // user-facing op; the kernel may come from a helper under it).
      for (auto it = around.rbegin(); !seq && it != around.rend(); ++it)
        if (range_is_op(*it)) seq = sequence(*it);
      row.push_back(seq ? Cell::Int(*seq) : Cell::Empty());
      row.push_back(Cell::Text(backward ? "bprop" : "fprop"));
      row.push_back(Cell::Int(kernels_of_op[*op]++));
      row.push_back(Cell::Text(layer));
      row.push_back(Cell::Text(std::string(trace.str(ev.name(e)))));
      dims = TensorShapes(args.InputShapes(e));
      if (const auto* t = args.InputTypes(e)) types = *t;
    } else {
      for (int j = 0; j < 3; ++j) row.push_back(Cell::Empty());
      row.push_back(Cell::Text(layer));
      row.push_back(Cell::Empty());
    }
    std::string kernel_name(trace.str(ev.name(kernel_event)));
    row.push_back(Cell::Text(kernel_name));
    row.push_back(Cell::Text(ShapesText(dims, types)));
    const int64_t sil = ev.dur(kernel_event);
    row.push_back(Cell::Int(sil));
    const std::optional<Cost> known =
        op ? OperatorCost(trace.str(ev.name(range_event(*op))), dims, types) : std::nullopt;
    const bool has_cost = known.has_value();
    const Cost cost = known.value_or(Cost{});
    if (has_cost && cost.tensor_core_eligible) {
      bool tc = false;
      for (const std::string& p : options.tensor_core_patterns)
        if (kernel_name.find(p) != std::string::npos) tc = true;
      row.push_back(Cell::Int(tc ? 1 : 0));
    } else {
      row.push_back(Cell::Text("-"));
    }
    const int64_t dev = ids.device_work.device[k], stream = ids.device_work.stream[k];
    row.push_back(dev != kNoId ? Cell::Int(dev) : Cell::Empty());
    row.push_back(stream != kNoId ? Cell::Int(stream) : Cell::Empty());
    row.push_back(Cell::Text(std::string(args.Text(kernel_event, KnownArg::kGrid))));
    row.push_back(Cell::Text(std::string(args.Text(kernel_event, KnownArg::kBlock))));
    if (has_cost) {
      row.push_back(Cell::Int(cost.flops));
      row.push_back(Cell::Int(cost.bytes));
      double ns = static_cast<double>(sil);
      row.push_back(sil > 0 ? Cell::Fixed(static_cast<double>(cost.flops) / ns / 1e3, 3)
                            : Cell::Empty());
      row.push_back(sil > 0 ? Cell::Fixed(static_cast<double>(cost.bytes) / ns, 3) : Cell::Empty());
      row.push_back(
          cost.bytes > 0
              ? Cell::Fixed(static_cast<double>(cost.flops) / static_cast<double>(cost.bytes), 3)
              : Cell::Empty());
    } else {
      for (int j = 0; j < 5; ++j) row.push_back(Cell::Text("na"));
    }
    rows.rows.push_back(std::move(row));
  }
  if (unlinked > 0)
    rows.notes.push_back(std::to_string(unlinked) +
                         " kernels without a launching operator in the trace (no runtime call with "
                         "their correlation inside a cpu_op)");
  return rows;
}

}  // namespace profsh
