#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"
// y[m, n] = sum_k x[m, k] * w[n, k] for verification windows on GPUs (from 9 activation rows up
// to the tile table's GEMV limit). matmul_gemv.comp gives every invocation all M rows for R = 2
// outputs, so x is read again for every 2 outputs (at 34 rows, 34 times the f16 weights' bytes)
// and each invocation folds 2 M sums across its workgroup. Here a subgroup owns a block of MG
// activation rows and the workgroup's subgroups share R weight rows: x is read N / R times, each
// invocation holds MG x R sums, and each subgroup folds its own with subgroupAdd (no shared
// memory, no barrier). On an H200 this took LlamaGen-XL's 32-row forward from 13.7 to 7.9 ms
// (docs/perf.md). A workgroup has ceil(M / MG) subgroups; any other count is correct too (each
// subgroup takes every NumSubgroups-th block), so a device whose subgroups differ in size from
// the one the host assumed still gets every row.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint MG = 4;  // activation rows per subgroup
layout(constant_id = 2) const uint R = 8;   // weight rows (outputs) per workgroup
layout(constant_id = 3) const bool W_F16 = true;
// 8 or 4: K is a multiple of it, so every row starts on a vector boundary; 1: any K.
layout(constant_id = 4) const uint VEC = 8;
#define FOLD_NORM_ID 5
#define FOLD_ACCUMULATE_ID 6
#include "matmul_fold.glsl"

layout(binding = 0) readonly buffer X { vec4 x4[]; };
layout(binding = 1) readonly buffer W { uvec4 w4[]; };
layout(binding = 2) buffer Y { float y[]; };           // read only where Y_ACCUMULATE
layout(binding = 3) readonly buffer G { vec4 g4[]; };  // the norm's weight, f32 (X_NORM)
// m: activation rows; n: weight rows in this dispatch; y[m * ldy + y_col0 + n] receives output n;
// eps: the norm's (X_NORM).
layout(push_constant) uniform P { uint m, n, k, ldy, y_col0; float eps; } p;

#include "matmul_load.glsl"

#define FOLD_ROWS MG
#include "gemv_fold.glsl"

void main() {
  const uint n0 = (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * R;
  if (n0 >= p.n) return;  // uniform across the workgroup
  const uint K = p.k, lane = gl_SubgroupInvocationID, SG = gl_SubgroupSize;

  uint wrow[R];  // first element of each weight row; rows past the end repeat the last one
  [[unroll]] for (uint r = 0; r < R; ++r) wrow[r] = min(n0 + r, p.n - 1u) * K;

  // The block index is uniform within a subgroup, so every subgroupAdd below has its whole
  // subgroup (the K loops end per lane, and reconverge before the sums).
  for (uint m0 = gl_SubgroupID * MG; m0 < p.m; m0 += gl_NumSubgroups * MG) {
    float acc[MG][R];
    [[unroll]] for (uint i = 0; i < MG; ++i)
      [[unroll]] for (uint r = 0; r < R; ++r) acc[i][r] = 0.0;
    uint xrow[MG];  // rows past the end repeat the last one and are not written
    [[unroll]] for (uint i = 0; i < MG; ++i) xrow[i] = min(m0 + i, p.m - 1u) * K;

#define GEMV_ROWS MG
#define GEMV_LANE lane
#define GEMV_LANES SG
#define GEMV_X4(e, k) load_x4((e) + (k))
#define GEMV_X1(e, k) load_x1((e) + (k))
#define GEMV_FOLD(m, k, x) fold_x(m, k, x)
    [[unroll]] for (uint i = 0; i < MG; ++i) fold_ss[i] = 0.0;
#include "gemv_k_loop.glsl"

    // Every lane gets every sum; output t of the block is written by lane t % SG.
    [[unroll]] for (uint i = 0; i < MG; ++i) {
      const float scale = X_NORM ? rms_scale(subgroupAdd(fold_ss[i]), K, p.eps) : 1.0;
      [[unroll]] for (uint r = 0; r < R; ++r) {
        const float s = subgroupAdd(acc[i][r]);
        const uint m = m0 + i, n = n0 + r;
        if (lane == (i * R + r) % SG && m < p.m && n < p.n) store_y(y[m * p.ldy + p.y_col0 + n], s, scale);
      }
    }
  }
}
