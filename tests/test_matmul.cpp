// matmul beyond the numeric checks (engine/checks/matmul_check.cpp): argument validation, the
// broadcast kernel's texel-view binding, and the cooperative-matrix shader, which lavapipe cannot
// run, at least reflecting into a valid layout.
#include <gtest/gtest.h>

#include "common/error.h"
#include "engine/ops/matmul.h"
#include "engine/ops/matmul_tiles.h"
#include "engine/ops/rope.h"
#include "engine/vk/shader_registry.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

using ops::MatmulPath;

class MatmulTest : public testing::VulkanTest {
 protected:
  // Records a matmul and returns the Error's message ("" when none was thrown).
  std::string error_of(const TensorView& x, const TensorView& w, const TensorView& y,
                       MatmulPath path = MatmulPath::Auto) {
    CommandStream s(ctx());
    try {
      ops::matmul(s, x, w, y, path);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(MatmulTest, RejectsBadShapesAndDtypes) {
  Tensor x = ctx().tensor(DType::F32, {3, 8}, "x"), w = ctx().tensor(DType::F16, {5, 8}, "w");
  Tensor y = ctx().tensor(DType::F32, {3, 5}, "y");
  Tensor w_k = ctx().tensor(DType::F16, {5, 7}, "w_k"), y_n = ctx().tensor(DType::F32, {3, 4}, "y_n");
  Tensor x_i = ctx().tensor(DType::I32, {3, 8}, "x_i"), x_1d = ctx().tensor(DType::F32, {24}, "x_1d");
  Tensor y_h = ctx().tensor(DType::F16, {3, 5}, "y_h");
  EXPECT_EQ(error_of(x, w, y), "");
  for (const std::string& msg : {error_of(x, w_k, y), error_of(x, w, y_n), error_of(x_i, w, y), error_of(x_1d, w, y),
                                 error_of(x, w, y_h), error_of(x, w, x.view().reshape({3, 8}))}) {
    EXPECT_NE(msg.find("matmul"), std::string::npos) << msg;
    EXPECT_NE(msg.find("x ["), std::string::npos) << "message should name the shapes: " << msg;
  }
}

TEST_F(MatmulTest, OutputMayNotOverlapInputs) {
  Tensor buf = ctx().tensor(DType::F32, {64}, "buf");
  Tensor w = ctx().tensor(DType::F32, {4, 4}, "w");
  const TensorView x = buf.view().rows(0, 16).reshape({4, 4});
  EXPECT_NE(error_of(x, w, buf.view().rows(8, 16).reshape({4, 4})), "");
  EXPECT_EQ(error_of(x, w, buf.view().rows(16, 16).reshape({4, 4})), "");
}

TEST_F(MatmulTest, CoopMatShaderReflectsLikeTheOthers) {
  const EmbeddedShader* s = find_embedded_shader("matmul_coopmat");
  ASSERT_NE(s, nullptr);
  const ShaderReflection r = reflect_shader(s->name, s->words, s->word_count);
  ASSERT_EQ(r.bindings.size(), 3u);
  EXPECT_TRUE(r.bindings[0].reads && !r.bindings[0].writes);
  EXPECT_TRUE(r.bindings[1].reads && !r.bindings[1].writes);
  EXPECT_TRUE(!r.bindings[2].reads && r.bindings[2].writes);
  EXPECT_EQ(r.push_constant_size, 20u);
  EXPECT_EQ(r.local_size_spec_id[0], 0);
}

// The broadcast kernel reads weights through their tensor's texel view: reflection makes binding 1
// a uniform texel buffer, every device tensor carries a view of exactly itself, and a view without
// one (not taken from a Tensor) still multiplies, through the portable kernels, while forcing the
// broadcast kernel on it is refused.
TEST_F(MatmulTest, BroadcastReadsWeightsThroughTheBlockTexelView) {
  const EmbeddedShader* s = find_embedded_shader("matmul_bcast");
  ASSERT_NE(s, nullptr);
  const ShaderReflection r = reflect_shader(s->name, s->words, s->word_count);
  ASSERT_EQ(r.bindings.size(), 4u);  // x, w, y and the norm's weight (ops::MatmulFusion)
  EXPECT_FALSE(r.bindings[0].texels);
  EXPECT_TRUE(r.bindings[1].texels && r.bindings[1].reads && !r.bindings[1].writes);
  EXPECT_FALSE(r.bindings[2].texels);
  EXPECT_TRUE(!r.bindings[3].texels && r.bindings[3].reads && !r.bindings[3].writes);

  Tensor w = ctx().tensor(DType::F16, {16, 8}, "w");
  const TensorView wv = w.view();
  ASSERT_NE(wv.texels.view, VkBufferView(VK_NULL_HANDLE));
  EXPECT_EQ(wv.texels.begin, wv.offset);  // the tensor's own view: nothing of its neighbours
  EXPECT_EQ(wv.texels.bytes, wv.bytes);
  EXPECT_EQ(wv.rows(8, 8).texels.view, wv.texels.view);

  Tensor x = ctx().tensor(DType::F32, {2, 8}, "x"), y = ctx().tensor(DType::F32, {2, 16}, "y");
  TensorView bare = wv;
  bare.texels = {};
  EXPECT_EQ(error_of(x, bare, y), "");
  if (ops::matmul_path_supported(ctx(), MatmulPath::Broadcast, 2, 8, DType::F16)) {
    EXPECT_EQ(error_of(x, w, y, MatmulPath::Broadcast), "");
    EXPECT_NE(error_of(x, bare, y, MatmulPath::Broadcast), "");
  }
}

TEST_F(MatmulTest, CoopMatOnlyWhereTheDeviceHasIt) {
  const bool coop = ops::matmul_path_supported(ctx(), MatmulPath::CoopMat, 64, 64, DType::F16);
  if (!ctx().caps().cooperative_matrix_nv) {
    EXPECT_FALSE(coop);
  }
  EXPECT_EQ(ops::choose_matmul_path(ctx(), 64, 64, DType::F16) == MatmulPath::CoopMat, coop);
}

// What a projection folds in (ops::MatmulFusion): the norm before it, the gate, the residual add
// after it. On the CPU kernels (the broadcast kernel) and the GPU kernels (VKSPEC_GPU_KERNELS's
// context on lavapipe) every part folds into the one dispatch, except the gate for a window's rows
// on GPUs (the row-block GEMV would recompute it in every workgroup): a separate gate dispatch.
// Whatever is not folded costs exactly one dispatch more.
TEST_F(MatmulTest, ProjectionsFoldTheirNormsGatesAndResidualAdds) {
  ContextOptions o;
  o.gpu_kernels = true;
  auto instance = std::make_shared<Instance>(InstanceOptions{true, false});
  Context gpu(instance, ctx().caps().index, o);
  if (!gpu.caps().subgroup_reduce) GTEST_SKIP() << "no subgroup arithmetic: no GEMV";
  const int64_t k = 40, n = 24;
  enum Kind { Norm, Residual, GateResidual };
  for (Context* c : {&ctx(), &gpu}) {
    const bool gpu_kernels = c == &gpu;
    Tensor w = c->tensor(DType::F16, {n, k}, "w"), g = c->tensor(DType::F32, {k}, "norm weight");
    for (const int64_t m : {2, 34})
      for (Kind kind : {Norm, Residual, GateResidual}) {
        const std::string what = std::string(gpu_kernels ? "GPU" : "CPU") + " kernels, " + std::to_string(m) +
                                 " rows, " +
                                 (kind == Norm       ? "norm"
                                  : kind == Residual ? "residual"
                                                     : "gate + residual");
        Tensor x = c->tensor(DType::F32, {m, kind == GateResidual ? 2 * k : k}, "x");
        Tensor y = c->tensor(DType::F32, {m, n}, "y"), xs = c->tensor(DType::F32, {m, k}, "x scratch");
        Tensor ys = c->tensor(DType::F32, {m, n}, "y scratch");
        ops::MatmulFusion f;
        if (kind == Norm) f.norm_weight = g;
        f.swiglu = kind == GateResidual;
        f.accumulate = kind != Norm;
        f.x_scratch = xs;
        f.y_scratch = ys;
        const ops::MatmulFolds folds = ops::matmul_folds(*c, m, w, f);
        EXPECT_EQ(folds.prologue, kind != Residual && !(gpu_kernels && m > 8 && kind == GateResidual)) << what;
        EXPECT_EQ(folds.epilogue, kind != Norm) << what;
        CommandStream s(*c);
        const WorkCounters before = c->counters();
        ops::matmul_fused(s, x, w, y, f);
        EXPECT_EQ((c->counters() - before).dispatches, 1u + (kind != Residual && !folds.prologue)) << what;
        s.submit_and_wait();
      }
  }
  EXPECT_EQ(instance->validation_log().count(), 0u);
}

// The q|k|v projection takes RoPE and the cache write into its stores for decoding rows on the GPU
// kernels (the plain GEMV) and runs rope_2d_kv_write as one more dispatch for a window's rows, on
// lavapipe's kernels and with every fold off. Bits: the op checks ("q|k|v fold",
// engine/checks/rope_kv_write_check.cpp).
TEST_F(MatmulTest, QkvProjectionFoldsRopeAndTheCacheWrite) {
  auto instance = std::make_shared<Instance>(InstanceOptions{true, false});
  ContextOptions gpu_options, off_options;
  gpu_options.gpu_kernels = true;
  off_options.disable_matmul_folds = true;
  Context gpu(instance, ctx().caps().index, gpu_options), off(instance, ctx().caps().index, off_options);
  if (!gpu.caps().subgroup_reduce) GTEST_SKIP() << "no subgroup arithmetic: no GEMV";
  const int64_t H = 2, Dh = 8, D = H * Dh, K = 32, B = 2;
  for (Context* c : {&ctx(), &gpu, &off})
    for (const int64_t T : {1, 17}) {
      const int64_t m = B * T, S = T + 1;
      const std::string what = std::string(c == &gpu   ? "GPU kernels"
                                           : c == &off ? "folds off"
                                                       : "CPU kernels") +
                               ", " + std::to_string(m) + " rows";
      Tensor w = c->tensor(DType::F16, {3 * D, K}, "wqkv"), x = c->tensor(DType::F32, {m, K}, "x");
      Tensor y = c->tensor(DType::F32, {m, 3 * D}, "qkv"), pos = c->tensor(DType::I32, {T, 3}, "positions");
      Tensor slots = c->tensor(DType::U32, {T}, "slots"), kc = c->tensor(DType::F16, {B, S, H, Dh}, "k cache");
      Tensor vc = c->tensor(DType::F16, {B, S, H, Dh}, "v cache"), table = ops::rope_2d_table(*c, Dh, 4);
      ops::MatmulFusion f;
      f.rope_kv = {H, Dh, B, pos, table, slots, kc, vc};
      const bool folds = ops::matmul_folds(*c, m, w, f).rope_kv;
      EXPECT_EQ(folds, c == &gpu && T == 1) << what;
      CommandStream s(*c);
      const WorkCounters before = c->counters();
      ops::matmul_fused(s, x, w, y, f);
      EXPECT_EQ((c->counters() - before).dispatches, folds ? 1u : 2u) << what;
      s.submit_and_wait();
    }
  // RoPE with the residual add, or on a projection that is not q|k|v, is refused.
  Tensor w = ctx().tensor(DType::F16, {48, 32}, "wqkv"), x = ctx().tensor(DType::F32, {2, 32}, "x");
  Tensor y = ctx().tensor(DType::F32, {2, 48}, "qkv"), pos = ctx().tensor(DType::I32, {1, 3}, "positions");
  Tensor slots = ctx().tensor(DType::U32, {1}, "slots"), kc = ctx().tensor(DType::F16, {2, 2, 2, 8}, "k cache");
  Tensor vc = ctx().tensor(DType::F16, {2, 2, 2, 8}, "v cache"), table = ops::rope_2d_table(ctx(), 8, 4);
  ops::MatmulFusion f;
  f.rope_kv = {2, 8, 2, pos, table, slots, kc, vc};
  f.accumulate = true;
  CommandStream s(ctx());
  EXPECT_THROW(ops::matmul_fused(s, x, w, y, f), Error);
  f.accumulate = false;
  f.rope_kv.heads = 3;  // 3 heads x 8 x 3 is not w's 48 rows
  EXPECT_THROW(ops::matmul_fused(s, x, w, y, f), Error);
  EXPECT_EQ(instance->validation_log().count(), 0u);
}

// Asking for a part that is not folded without the scratch it needs, or for two prologues, is an
// error that names what is missing.
TEST_F(MatmulTest, FusionWithoutItsScratchIsRefused) {
  Tensor w = ctx().tensor(DType::F16, {8, 16}, "w"), g = ctx().tensor(DType::F32, {16}, "norm weight");
  Tensor x = ctx().tensor(DType::F32, {2, 16}, "x"), y = ctx().tensor(DType::F32, {2, 8}, "y");
  ops::MatmulFusion both;
  both.norm_weight = g;
  both.swiglu = true;
  CommandStream s(ctx());
  EXPECT_THROW(ops::matmul_fused(s, x, w, y, both), Error);
  ops::MatmulFusion residual;
  residual.accumulate = true;  // forced onto the cooperative-matrix path where it exists: not folded
  if (ops::matmul_path_supported(ctx(), MatmulPath::CoopMat, 2, 16, DType::F16))
    EXPECT_THROW(ops::matmul_fused(s, x, w, y, residual, MatmulPath::CoopMat), Error);
  ops::MatmulFusion norm;
  norm.norm_weight = ctx().tensor(DType::F32, {15}, "short norm weight");
  EXPECT_THROW(ops::matmul_fused(s, x, w, y, norm), Error);
}

// `vkspec devices` names the table row each device takes and whether it was measured there.
TEST_F(MatmulTest, TileSummaryNamesTheRowAndWhereItWasTuned) {
  EXPECT_NE(ops::matmul_tiles_summary(ctx().caps()).find(ops::matmul_tiles(ctx().caps()).name), std::string::npos);
  DeviceCaps nvidia = ctx().caps(), amd = ctx().caps();
  nvidia.cpu_driver = amd.cpu_driver = false;
  nvidia.vendor_id = 0x10de;
  amd.vendor_id = 0x1002;
  const std::string n = ops::matmul_tiles_summary(nvidia), a = ops::matmul_tiles_summary(amd);
  EXPECT_NE(n.find("row-block GEMV (8 x 4) to 80"), std::string::npos) << n;
  EXPECT_NE(n.find("tuned on NVIDIA"), std::string::npos) << n;
  EXPECT_NE(a.find("not measured"), std::string::npos) << a;
}

}  // namespace
}  // namespace vkspec
