// PyProf's kernel table on a small synthetic trace (docs/ANALYSIS.md "PyProf's kernel table").
#include "engine/analysis/kernel_table.h"

#include <gtest/gtest.h>

#include "gpu_views_fixture.h"
#include "test_util.h"

namespace profsh {
namespace {

using testing::CellText;

TEST(KernelTable, AKernelNamesItsOperatorLayerAndCost) {
  auto trace = testing::MustImport(testing::kGpuViewsTrace);
  const AnalysisRows rows = KernelTable(*trace);
  ASSERT_EQ(rows.rows.size(), 2u);  // in start order
  EXPECT_EQ(CellText(rows, 0, "kernel"), "volta_sgemm_128x64_nn");
  EXPECT_EQ(CellText(rows, 0, "op"), "aten::mm");
  EXPECT_EQ(CellText(rows, 0, "seq"), "5");
  EXPECT_EQ(CellText(rows, 0, "dir"), "fprop");
  EXPECT_EQ(CellText(rows, 0, "layer"), "layer1:inner");
  EXPECT_EQ(CellText(rows, 0, "sil"), "20000");
  // 2·M·N·K for a (2×3)·(3×4) product; 4 bytes each of (M·N + M·K + N·K) elements.
  EXPECT_EQ(CellText(rows, 0, "flops"), "48");
  EXPECT_EQ(CellText(rows, 0, "bytes"), "104");
  // A tensor-core pattern (volta's 884 is not in this name): a matmul kernel that uses none.
  EXPECT_EQ(CellText(rows, 0, "tc"), "0");
  EXPECT_EQ(CellText(rows, 1, "kernel"), "relu_kernel");
  EXPECT_EQ(CellText(rows, 1, "op"), "");  // launched outside every operator
  EXPECT_EQ(CellText(rows, 1, "tc"), "-");
}

TEST(KernelTable, TensorCorePatternsCanBeAdded) {
  auto trace = testing::MustImport(testing::kGpuViewsTrace);
  KernelTableOptions options;
  options.tensor_core_patterns.push_back("sgemm_128x64");
  const AnalysisRows rows = KernelTable(*trace, options);
  ASSERT_EQ(rows.rows.size(), 2u);
  EXPECT_EQ(CellText(rows, 0, "tc"), "1");
}

}  // namespace
}  // namespace profsh
