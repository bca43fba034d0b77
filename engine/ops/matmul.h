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
void matmul_with_shape(CommandStream& s, const TensorView& x, const TensorView& w, const TensorView& y,
                       MatmulPath path, const MatmulShape& shape);

// y = (silu(a) * b) w^T for ab f32 [M, 2K] holding a | b (the FFN's fused w1|w3 output) and w
// [N, K]: LlamaGen's SwiGLU gate and down projection. Where the broadcast kernel (CPU drivers)
// or the plain GEMV (GPUs, up to 8 rows) runs (matmul_swiglu_fuses), it computes the gate while
// loading activations, one dispatch and no hidden activations in memory; elsewhere swiglu_fused
// writes hidden f32 [M, K] and matmul reads it. The gate's values are the same either way
// (shaders/silu.glsl).
void matmul_swiglu(CommandStream& s, const TensorView& ab, const TensorView& w, const TensorView& y,
                   const TensorView& hidden);
bool matmul_swiglu_fuses(Context& ctx, int64_t m, const TensorView& w);

}  // namespace vkspec::ops
