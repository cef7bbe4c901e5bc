#include "engine/analysis/tensorboard/tensor_core.h"

#include <algorithm>
#include <array>

namespace profsh {

bool PluginTensorCoreKernel(std::string_view kernel_name) {
  static constexpr std::array<std::string_view, 18> kPatterns = {
      "h884",
      "s884",
      "h1688",
      "s1688",
      "hmma",
      "i8816",
      "16816",
      "dgrad_1x1_stride_2x2",
      "first_layer_wgrad_kernel",
      "conv1x1",
      "conv2d_c1_k1",
      "direct_group",
      "xmma_implicit_gemm",
      "xmma_sparse_conv",
      "xmma_warp_specialized_implicit_gemm",
      "xmma_gemm",
      "xmma_sparse_gemm",
      "c1688"};
  return std::any_of(kPatterns.begin(), kPatterns.end(), [&](std::string_view p) {
    return kernel_name.find(p) != std::string_view::npos;
  });
}

bool PluginTensorCoreEligibleOperator(std::string_view operator_name) {
  static constexpr std::array<std::string_view, 45> kOperators = {
      "aten::_convolution",
      "aten::conv1d",
      "aten::conv2d",
      "aten::conv3d",
      "aten::conv_tbc",
      "aten::conv_transpose1d",
      "aten::conv_transpose2d",
      "aten::conv_transpose3d",
      "aten::convolution",
      "aten::cudnn_convolution",
      "aten::cudnn_convolution_transpose",
      "aten::prelu",
      "aten::addmm",
      "aten::addmv",
      "aten::addr",
      "aten::matmul",
      "aten::mm",
      "aten::mv",
      "aten::linear",
      "aten::addbmm",
      "aten::baddbmm",
      "aten::bmm",
      "aten::chain_matmul",
      "aten::linalg_multi_dot",
      "aten::_thnn_fused_lstm_cell",
      "aten::_thnn_fused_gru_cell",
      "aten::lstm_cell",
      "aten::gru_cell",
      "aten::rnn_tanh_cell",
      "aten::rnn_relu_cell",
      "CudnnConvolutionBackward",
      "BmmBackward0",
      "aten::cudnn_convolution_transpose_backward",
      "CudnnConvolutionTransposeBackward",
      "MmBackward",
      "aten::cudnn_convolution_backward_weight",
      "aten::addmm_",
      "AddmvBackward",
      "MvBackward",
      "aten::cudnn_convolution_transpose_backward_weight",
      "aten::cudnn_convolution_transpose_backward_input",
      "AddmmBackward",
      "aten::cudnn_convolution_backward_input",
      "AddbmmBackward",
      "aten::cudnn_convolution_backward"};
  return std::find(kOperators.begin(), kOperators.end(), operator_name) != kOperators.end();
}

}  // namespace profsh
