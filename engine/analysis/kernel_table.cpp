#include "engine/analysis/kernel_table.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "engine/analysis/arg_reader.h"
#include "engine/analysis/range_nesting.h"

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

// "[[5, 64], [], [64]]" -> shapes; a nested list (a tensor list) or a scalar gives nullopt there.
std::vector<std::optional<Shape>> ParseDims(std::string_view text) {
  std::vector<std::optional<Shape>> out;
  size_t i = text.find('[');
  if (i == std::string_view::npos) return out;
  ++i;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i >= text.size() || text[i] == ']') break;
    if (text[i] != '[') {  // not a list: skip the value
      while (i < text.size() && text[i] != ',' && text[i] != ']') ++i;
      out.push_back(std::nullopt);
      continue;
    }
    ++i;
    Shape shape;
    bool nested = false;
    int depth = 1;
    while (i < text.size() && depth > 0) {
      char c = text[i];
      if (c == '[') {
        nested = true;
        ++depth;
        ++i;
      } else if (c == ']') {
        --depth;
        ++i;
      } else if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
        size_t j = i + 1;
        while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
        shape.push_back(std::stoll(std::string(text.substr(i, j - i))));
        i = j;
      } else {
        ++i;
      }
    }
    out.push_back(nested ? std::nullopt : std::optional<Shape>(shape));
  }
  return out;
}

// ["float", "c10::Half", "Scalar"] -> the quoted strings.
std::vector<std::string> ParseTypes(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  while ((i = text.find('"', i)) != std::string_view::npos) {
    size_t j = text.find('"', i + 1);
    if (j == std::string_view::npos) break;
    out.emplace_back(text.substr(i + 1, j - i - 1));
    i = j + 1;
  }
  return out;
}

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

enum class Role : uint8_t { kNone, kOp, kAnnotation, kRuntime, kDevice };

}  // namespace

AnalysisRows KernelTable(const Trace& trace, const KernelTableOptions& options) {
  AnalysisRows rows;
  rows.columns = {"idx",    "seq",   "dir",    "sub",    "layer",        "op",   "kernel",
                  "params", "sil",   "tc",     "device", "stream",       "grid", "block",
                  "flops",  "bytes", "tflops", "gbps",   "flop_per_byte"};
  const EventTable& ev = trace.events;
  std::vector<Role> roles;
  for (const EventTemplate& t : ev.templates()) {
    Role role = Role::kNone;
    if (EventTable::PhaseOf(t.kind) == 'X') {
      std::string_view cat = trace.category_name(EventTable::CategoryOf(t.kind));
      if (cat == "cpu_op")
        role = Role::kOp;
      else if (cat == "user_annotation" || cat == "nvtx" || cat == "itt")
        role = Role::kAnnotation;
      else if (cat == "cuda_driver" || (cat.size() > 8 && cat.substr(cat.size() - 8) == "_runtime"))
        role = Role::kRuntime;
      else if (cat == "kernel" || cat == "Kernel")
        role = Role::kDevice;
    }
    roles.push_back(role);
  }
  enum Key : size_t {
    kCorrelation,
    kExternalId,
    kSequence,
    kDims,
    kTypes,
    kDevice,
    kStream,
    kGrid,
    kBlock
  };
  ArgReader reader(trace, {"correlation", "External id", "Sequence number", "Input Dims",
                           "Input type", "device", "stream", "grid", "block"});
  std::vector<Span> ranges, calls, kernels;
  std::vector<bool> range_is_op;
  for (size_t i = 0; i < ev.size(); ++i) {
    Role role = roles[ev.template_column()[i]];
    if (role == Role::kNone) continue;
    Span s{ev.ts(i), ev.end(i), ev.name(i), ev.track(i), -1, 0, i};
    if (role == Role::kOp || role == Role::kAnnotation) {
      ranges.push_back(s);
      range_is_op.push_back(role == Role::kOp);
      continue;
    }
    reader.GetInt(ev.args(i), kCorrelation, &s.correlation);
    (role == Role::kRuntime ? calls : kernels).push_back(s);
  }
  if (kernels.empty()) {
    rows.notes.push_back("the trace has no kernels");
    return rows;
  }
  RangeTree tree = NestRanges(ranges);
  auto enclosing = EnclosingRanges(ranges, tree, calls);
  std::unordered_map<int64_t, uint32_t> call_of;
  for (size_t c = 0; c < calls.size(); ++c)
    call_of.try_emplace(calls[c].correlation, static_cast<uint32_t>(c));
  std::stable_sort(kernels.begin(), kernels.end(),
                   [](const Span& a, const Span& b) { return a.ts < b.ts; });

  auto text_arg = [&](uint64_t event, size_t key) -> std::string_view {
    ArgValue v;
    if (!reader.Get(ev.args(event), key, &v)) return {};
    if (v.type == ArgType::kString || v.type == ArgType::kJson) return trace.str(v.str);
    return {};
  };
  auto int_arg = [&](uint64_t event, size_t key) -> std::optional<int64_t> {
    int64_t v;
    if (reader.GetInt(ev.args(event), key, &v)) return v;
    return std::nullopt;
  };
  std::unordered_map<uint32_t, int64_t> kernels_of_op;  // range index -> kernels seen so far
  size_t unlinked = 0;
  for (size_t idx = 0; idx < kernels.size(); ++idx) {
    const Span& k = kernels[idx];
    std::vector<uint32_t> around;
    auto call = call_of.find(k.correlation);
    if (call != call_of.end()) around = enclosing[call->second];
    std::optional<uint32_t> op;
    std::string layer;
    bool backward = false;
    for (uint32_t r : around) {
      std::string_view name = trace.str(ranges[r].name);
      if (name.find("evaluate_function") != std::string_view::npos ||
          name.find("Backward") != std::string_view::npos)
        backward = true;
      if (range_is_op[r]) {
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
      const uint64_t e = ranges[*op].event;
      auto seq = int_arg(e, kSequence);
      // The sequence number of the innermost operator that has one (torch gives it to the
      // user-facing op; the kernel may come from a helper under it).
      for (auto it = around.rbegin(); !seq && it != around.rend(); ++it)
        if (range_is_op[*it]) seq = int_arg(ranges[*it].event, kSequence);
      row.push_back(seq ? Cell::Int(*seq) : Cell::Empty());
      row.push_back(Cell::Text(backward ? "bprop" : "fprop"));
      row.push_back(Cell::Int(kernels_of_op[*op]++));
      row.push_back(Cell::Text(layer));
      row.push_back(Cell::Text(std::string(trace.str(ranges[*op].name))));
      dims = ParseDims(text_arg(e, kDims));
      types = ParseTypes(text_arg(e, kTypes));
    } else {
      for (int j = 0; j < 3; ++j) row.push_back(Cell::Empty());
      row.push_back(Cell::Text(layer));
      row.push_back(Cell::Empty());
    }
    std::string kernel_name(trace.str(k.name));
    row.push_back(Cell::Text(kernel_name));
    row.push_back(Cell::Text(ShapesText(dims, types)));
    const int64_t sil = k.end - k.ts;
    row.push_back(Cell::Int(sil));
    const std::optional<Cost> known =
        op ? OperatorCost(trace.str(ranges[*op].name), dims, types) : std::nullopt;
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
    auto dev = int_arg(k.event, kDevice);
    auto stream = int_arg(k.event, kStream);
    row.push_back(dev ? Cell::Int(*dev) : Cell::Empty());
    row.push_back(stream ? Cell::Int(*stream) : Cell::Empty());
    row.push_back(Cell::Text(std::string(text_arg(k.event, kGrid))));
    row.push_back(Cell::Text(std::string(text_arg(k.event, kBlock))));
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
