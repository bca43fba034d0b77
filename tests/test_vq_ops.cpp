// Argument validation of the VQ tokenizer ops (conv2d, group_norm, swish, upsample_nearest_2x,
// spatial_attention, codebook_lookup/quantize): bad shapes and dtypes throw Error naming the op;
// numerical checks are the op checks (test_op_checks).
#include <gtest/gtest.h>

#include <string>

#include "engine/ops/codebook.h"
#include "engine/ops/conv2d.h"
#include "engine/ops/group_norm.h"
#include "engine/ops/spatial_attention.h"
#include "engine/ops/swish.h"
#include "engine/ops/upsample.h"
#include "common/error.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

class VqOpsTest : public testing::VulkanTest {
 protected:
  Tensor t(DType d, Shape s) { return ctx().tensor(d, s, "t"); }
};

// Runs f, which must throw Error whose message starts with op.
template <class F>
void expect_error(const char* op, F f) {
  try {
    f();
    ADD_FAILURE() << op << ": no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(op, 0), 0u) << e.what();
  }
}

TEST_F(VqOpsTest, Conv2dOutputShapes) {
  EXPECT_EQ(ops::conv2d_output_shape({2, 32, 32, 64}, {128, 64, 3, 3}, ops::Conv2dParams::same(3)),
            Shape({2, 32, 32, 128}));
  EXPECT_EQ(ops::conv2d_output_shape({1, 32, 32, 64}, {64, 64, 3, 3}, ops::Conv2dParams::downsample()),
            Shape({1, 16, 16, 64}));
  EXPECT_EQ(ops::conv2d_output_shape({1, 33, 33, 64}, {64, 64, 3, 3}, ops::Conv2dParams::downsample()),
            Shape({1, 16, 16, 64}));  // (33 + 1 - 3) / 2 + 1, as PyTorch
  EXPECT_EQ(ops::conv2d_output_shape({1, 5, 7, 8}, {3, 8, 1, 1}, ops::Conv2dParams::same(1)), Shape({1, 5, 7, 3}));
}

TEST_F(VqOpsTest, Conv2dRejectsBadArguments) {
  CommandStream s(ctx());
  Tensor x = t(DType::F32, {1, 8, 8, 16}), w = t(DType::F32, {32, 16, 3, 3}), b = t(DType::F32, {32});
  Tensor y = t(DType::F32, {1, 8, 8, 32});
  const auto same = ops::Conv2dParams::same(3);
  expect_error("conv2d", [&] { ops::conv2d(s, x, t(DType::F32, {32, 15, 3, 3}), b, y, same); });    // Ci
  expect_error("conv2d", [&] { ops::conv2d(s, x, t(DType::F32, {32, 16, 5, 5}), b, y, same); });    // 5x5
  expect_error("conv2d", [&] { ops::conv2d(s, x, w, t(DType::F32, {31}), y, same); });              // bias
  expect_error("conv2d", [&] { ops::conv2d(s, x, w, b, t(DType::F32, {1, 8, 8, 31}), same); });     // y
  expect_error("conv2d", [&] { ops::conv2d(s, x, w, b, t(DType::F16, {1, 8, 8, 32}), same); });     // y f16
  expect_error("conv2d", [&] { ops::conv2d(s, x, t(DType::I32, {32, 16, 3, 3}), b, y, same); });    // w i32
  expect_error("conv2d", [&] { ops::conv2d(s, x, w, b, y, {3, 1, 1, 1, 1}); });                     // stride 3
  expect_error("conv2d", [&] { ops::conv2d(s, x, w, b, y, {1, 3, 1, 1, 1}); });                     // pad 3
  expect_error("conv2d", [&] { ops::conv2d(s, x, w, b, x.view().reshape({1, 8, 4, 32}), same); });  // y = x
  Tensor r = t(DType::F32, {1, 8, 8, 31});
  const TensorView rv = r.view();
  expect_error("conv2d", [&] { ops::conv2d(s, x, w, b, y, same, &rv); });  // residual shape
  ops::Conv2dKernel k;
  k.co_block = 3;
  expect_error("conv2d", [&] { ops::conv2d(s, x, w, b, y, same, nullptr, k); });
  EXPECT_EQ(s.command_count(), 0u);
}

TEST_F(VqOpsTest, GroupNormRejectsBadArguments) {
  CommandStream s(ctx());
  Tensor x = t(DType::F32, {1, 4, 4, 64}), g = t(DType::F32, {64});
  expect_error("group_norm", [&] {
    ops::group_norm(s, t(DType::F32, {1, 4, 4, 48}), t(DType::F32, {48}), t(DType::F32, {48}),
                    t(DType::F32, {1, 4, 4, 48}));
  });
  expect_error("group_norm", [&] { ops::group_norm(s, x, t(DType::F32, {32}), g, x); });
  expect_error("group_norm", [&] { ops::group_norm(s, x, g, g, t(DType::F32, {1, 4, 4, 32})); });
  expect_error("group_norm", [&] { ops::group_norm(s, t(DType::F32, {16, 64}), g, g, t(DType::F32, {16, 64})); });
  ops::GroupNormKernel k;
  k.workgroup_size = 96;
  expect_error("group_norm", [&] { ops::group_norm(s, x, g, g, x, {}, k); });
  EXPECT_EQ(s.command_count(), 0u);
}

TEST_F(VqOpsTest, ElementwiseRejectBadArguments) {
  CommandStream s(ctx());
  expect_error("swish", [&] { ops::swish(s, t(DType::F32, {10}), t(DType::F32, {11})); });
  expect_error("swish", [&] { ops::swish(s, t(DType::F16, {10}), t(DType::F16, {10})); });
  Tensor x = t(DType::F32, {1, 3, 5, 8});
  expect_error("upsample_nearest_2x", [&] { ops::upsample_nearest_2x(s, x, t(DType::F32, {1, 6, 9, 8})); });
  expect_error("upsample_nearest_2x", [&] { ops::upsample_nearest_2x(s, x, x); });
  EXPECT_EQ(s.command_count(), 0u);
}

TEST_F(VqOpsTest, SpatialAttentionRejectsBadArguments) {
  CommandStream s(ctx());
  Tensor q = t(DType::F32, {1, 16, 32}), k = t(DType::F32, {1, 16, 32}), v = t(DType::F32, {1, 16, 32});
  expect_error("spatial_attention", [&] {
    ops::spatial_attention(s, q, k, t(DType::F32, {1, 16, 31}), t(DType::F32, {1, 16, 32}));
  });
  expect_error("spatial_attention", [&] { ops::spatial_attention(s, q, k, v, q); });  // out = q
  ops::SpatialAttentionKernel kern;
  kern.keys = 64;
  expect_error("spatial_attention", [&] {
    ops::spatial_attention(s, q, k, v, t(DType::F32, {1, 16, 32}), 0.0f, kern);
  });
  EXPECT_EQ(s.command_count(), 0u);
}

TEST_F(VqOpsTest, CodebookRejectsBadArguments) {
  CommandStream s(ctx());
  Tensor cb = t(DType::F32, {100, 8}), ids = t(DType::U32, {2, 4, 4});
  expect_error("codebook_lookup", [&] { ops::codebook_lookup(s, ids, cb, t(DType::F32, {2, 4, 4, 7})); });
  expect_error("codebook_lookup", [&] {
    ops::codebook_lookup(s, t(DType::F32, {2, 4, 4}), cb, t(DType::F32, {2, 4, 4, 8}));
  });
  expect_error("codebook_quantize", [&] { ops::codebook_quantize(s, t(DType::F32, {2, 4, 4, 7}), cb, ids); });
  expect_error("codebook_quantize", [&] {
    ops::codebook_quantize(s, t(DType::F32, {2, 4, 4, 8}), cb, t(DType::I32, {2, 4, 4}));
  });
  expect_error("codebook_quantize", [&] {
    ops::codebook_quantize(s, t(DType::F32, {1, 1, 65}), t(DType::F32, {4, 65}), t(DType::U32, {1, 1}));
  });
  EXPECT_EQ(s.command_count(), 0u);
}

}  // namespace
}  // namespace vkspec
