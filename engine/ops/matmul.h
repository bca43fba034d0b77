#pragma once
// y = x * w^T: activations x [M, K] f32, weights w [N, K] f16 or f32 (nn.Linear layout, row n
// produces output n), y [M, N] f32.
#include "engine/vk/command_stream.h"

namespace vkspec::ops {

enum class MatmulPath {
  Auto,     // choose from M and the device (choose_matmul_path)
  Gemv,     // weight-streaming K-reduction: decoding rows, and (row-block kernel) verification windows
  Gemm,     // register-blocked, any M, runs everywhere
  CoopMat,  // GL_NV_cooperative_matrix, fp16 inputs with f32 accumulation
  // Activation rows shared across a subgroup by broadcast, weights through a uniform texel buffer;
  // for CPU implementations. Needs shaderInt64, a fixed subgroup size that is a multiple of 4
  // (f16) or 2 (f32), K a multiple of 8 (f16 weights) or 4 (f32), and weights viewed from a
  // Tensor (TensorView::texels).
  Broadcast,
};

const char* matmul_path_name(MatmulPath p);

// The kernel matmul() runs for x [m, k] and weights of dtype w on this device (never Auto).
// CoopMat needs VK_NV_cooperative_matrix with 16x16x16 fp16 -> f32 and is skipped when
// VKSPEC_DISABLE_COOPMAT=1 (ContextOptions::disable_coopmat).
MatmulPath choose_matmul_path(Context& ctx, int64_t m, int64_t k, DType w);

// Whether matmul() can take this path for x [m, k] and weights of dtype w on this device.
bool matmul_path_supported(Context& ctx, MatmulPath path, int64_t m, int64_t k, DType w);

// Records y = x * w^T. Bindings larger than maxStorageBufferRange are split into several
// dispatches. Forcing a path the device or shape cannot take throws Error.
void matmul(CommandStream& s, const TensorView& x, const TensorView& w, const TensorView& y,
            MatmulPath path = MatmulPath::Auto);
// Kernel shapes given instead of the device's tile table (bench-ops' matmul-sweep: how a device's
// table row is chosen; the op checks: that every shape is correct). 0 keeps the table's.
struct MatmulShape {
  // Plain GEMV (either set: also for the rows the table gives the row-block kernel)
  uint32_t gemv_workgroup = 0;  // GEMV: invocations sharing one K-reduction
  uint32_t gemv_outputs = 0;    // GEMV: weight rows per workgroup, at most 16
  uint32_t coop_bk = 0;         // cooperative matrix: K per slice, a multiple of 16 up to 128
  // Row-block GEMV (from 9 rows on the GEMV path): weight rows per workgroup and activation rows
  // per subgroup, each at most 16; both set, they run it also where the table has it off.
  uint32_t rows_outputs = 0, rows_per_subgroup = 0;
};
// The same as matmul() with the given kernel shape.
void matmul_with_shape(CommandStream& s, const TensorView& x, const TensorView& w, const TensorView& y, MatmulPath path,
                       const MatmulShape& shape);

// What a projection takes in with it: a prologue on x, an epilogue on y. Where the kernel the
// device takes for these rows folds them into its loads and stores (matmul_folds), the whole is
// one dispatch; elsewhere the prologue and the epilogue are dispatches of their own through the
// scratch tensors. Each of LlamaGen's blocks has four projections and five such neighbours (two
// norms, two residual adds, the gate): folded, a block is 6 dispatches instead of 9.
struct MatmulFusion {
  // Prologue, at most one of:
  // - norm_weight (f32 [K]): x's rows RMS-normalised (norm_eps) and scaled by it, as rms_norm()
  //   would; folded, the scale comes after the sum (shaders/matmul_fold.glsl): equal to rounding.
  TensorView norm_weight;
  float norm_eps = 1e-5f;
  // - swiglu: x is [M, 2K] holding a | b (the FFN's w1|w3 output) and the product uses
  //   silu(a) * b, the same values folded or not (shaders/silu.glsl).
  bool swiglu = false;
  // Epilogue: y += the product (a residual connection) instead of y = it; y's bits are those of
  // ops::add after the product, folded or not.
  bool accumulate = false;
  // Or, for the q|k|v projection (y [M, 3 D], D = heads * head_dim): RoPE on q and k and the
  // write of k and v into the KV cache (rope_2d_kv_write's arguments on y's three column blocks;
  // y's q and k are left rotated, as that op leaves them). Folded, the same bits in one dispatch;
  // asked for when heads > 0.
  struct RopeKv {
    int64_t heads = 0, head_dim = 0, batch = 0;
    TensorView positions, table, slots, k_cache, v_cache;
  } rope_kv;
  // Batch invariance (several images per forward, issue 34): > 0 picks the kernel as for this many
  // rows (one image's, as its strategy plans them: more than M where a forward runs fewer) and
  // keeps its per-row arithmetic at any M, so each row's result is the same bits whatever the
  // rows beside it; 0 picks the fastest kernel for M.
  int64_t rows_per_image = 0;
  // Where the prologue is not folded: the normed or gated activations, f32 [M, K]; where the
  // epilogue is not: the product before its add, f32 [M, N]. Needed only where that part is
  // asked for (an invalid view otherwise).
  TensorView x_scratch, y_scratch;
};

// Which parts of `f` the kernel for x's m rows and weights w folds in on this device (none under
// VKSPEC_DISABLE_MATMUL_FOLDS, ContextOptions::disable_matmul_folds).
struct MatmulFolds {
  bool prologue = false, epilogue = false;
  bool rope_kv = false;  // the plain GEMV, up to 8 rows (decoding on GPUs)
};
MatmulFolds matmul_folds(Context& ctx, int64_t m, const TensorView& w, const MatmulFusion& f,
                         MatmulPath path = MatmulPath::Auto);

// Records y = prologue(x) w^T, or y += it (f.accumulate), then f.rope_kv. path: as matmul()'s (the
// op checks force each kernel; the parts the forced kernel cannot fold run on their own).
void matmul_fused(CommandStream& s, const TensorView& x, const TensorView& w, const TensorView& y,
                  const MatmulFusion& f, MatmulPath path = MatmulPath::Auto);

}  // namespace vkspec::ops
