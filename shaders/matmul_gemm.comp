#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// y[m, n] = sum_k x[m, k] * w[n, k] for many activation rows (prefill, verification windows).
// Register blocking without shared memory: each invocation owns a TM x TN block of y, so every
// loaded x vector is used TN times and every weight vector TM times. No barriers at all, which
// matters on CPU implementations where a barrier switches every invocation's context.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint TM = 4;  // activation rows per invocation
layout(constant_id = 2) const uint TN = 8;  // weight rows (outputs) per invocation
layout(constant_id = 3) const bool W_F16 = false;
// 8 or 4: K is a multiple of it, so rows start on a vector boundary; 1: any K.
layout(constant_id = 4) const uint VEC = 4;
#define FOLD_NORM_ID 5
#define FOLD_ACCUMULATE_ID 6
#include "matmul_fold.glsl"

layout(binding = 0) readonly buffer X { vec4 x4[]; };
layout(binding = 1) readonly buffer W { uvec4 w4[]; };
layout(binding = 2) buffer Y { float y[]; };  // read only where Y_ACCUMULATE
// m, n: rows of x and w in this dispatch; tiles_n = ceil(n / TN);
// y[row * ldy + y_col0 + col] receives output (row, col).
layout(push_constant) uniform P { uint m, n, k, ldy, y_col0, tiles_n; } p;

#include "matmul_load.glsl"

void main() {
  const uint t = linear_invocation();
  const uint tiles_m = (p.m + TM - 1u) / TM;
  if (t >= tiles_m * p.tiles_n) return;
  // Neighbouring invocations share their x rows and walk along n.
  const uint m0 = (t / p.tiles_n) * TM, n0 = (t % p.tiles_n) * TN;
  const uint K = p.k;

  uint xrow[TM], wrow[TN];  // first element of each row; rows past the end repeat the last one
  [[unroll]] for (uint i = 0; i < TM; ++i) xrow[i] = min(m0 + i, p.m - 1u) * K;
  [[unroll]] for (uint j = 0; j < TN; ++j) wrow[j] = min(n0 + j, p.n - 1u) * K;
  float acc[TM][TN];
  [[unroll]] for (uint i = 0; i < TM; ++i)
    [[unroll]] for (uint j = 0; j < TN; ++j) acc[i][j] = 0.0;

  if (VEC == 8u) {
    for (uint k = 0; k < K; k += 8u) {
      vec4 xlo[TM], xhi[TM];
      [[unroll]] for (uint i = 0; i < TM; ++i) {
        xlo[i] = load_x4(xrow[i] + k);
        xhi[i] = load_x4(xrow[i] + k + 4u);
      }
      [[unroll]] for (uint j = 0; j < TN; ++j) {
        vec4 lo, hi;
        load_w8(wrow[j] + k, lo, hi);
        [[unroll]] for (uint i = 0; i < TM; ++i) acc[i][j] += dot(xlo[i], lo) + dot(xhi[i], hi);
      }
    }
  } else if (VEC == 4u) {
    for (uint k = 0; k < K; k += 4u) {
      vec4 xv[TM];
      [[unroll]] for (uint i = 0; i < TM; ++i) xv[i] = load_x4(xrow[i] + k);
      [[unroll]] for (uint j = 0; j < TN; ++j) {
        const vec4 wv = load_w4(wrow[j] + k);
        [[unroll]] for (uint i = 0; i < TM; ++i) acc[i][j] += dot(xv[i], wv);
      }
    }
  } else {
    for (uint k = 0; k < K; ++k) {
      float xv[TM];
      [[unroll]] for (uint i = 0; i < TM; ++i) xv[i] = load_x1(xrow[i] + k);
      [[unroll]] for (uint j = 0; j < TN; ++j) {
        const float wv = load_w1(wrow[j] + k);
        [[unroll]] for (uint i = 0; i < TM; ++i) acc[i][j] += xv[i] * wv;
      }
    }
  }

  [[unroll]] for (uint i = 0; i < TM; ++i) {
    if (m0 + i >= p.m) break;
    [[unroll]] for (uint j = 0; j < TN; ++j)
      if (n0 + j < p.n) store_y(y[(m0 + i) * p.ldy + p.y_col0 + n0 + j], acc[i][j], 1.0);
  }
}
