#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"
// y[m, n] = sum_k x[m, k] * w[n, k] for a handful of activation rows (decoding, CFG pairs).
// Bound by weight bandwidth, so each workgroup streams R weight rows exactly once with 16-byte
// loads and applies every loaded vector to all M activation rows; the K-reduction is spread over
// the workgroup and folded with subgroupAdd, then across subgroups through shared memory (one
// barrier per workgroup).
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint M = 1;               // activation rows, 1..8
layout(constant_id = 2) const uint R = 2;               // weight rows (outputs) per workgroup
layout(constant_id = 3) const uint MAX_SUBGROUPS = 64;  // workgroup size / smallest subgroup size
layout(constant_id = 4) const bool W_F16 = true;
// 8 or 4: K is a multiple of it, so every row starts on a vector boundary; 1: any K.
layout(constant_id = 5) const uint VEC = 8;

layout(binding = 0) readonly buffer X { vec4 x4[]; };
layout(binding = 1) readonly buffer W { uvec4 w4[]; };
layout(binding = 2) writeonly buffer Y { float y[]; };
// n: weight rows in this dispatch; y[m * ldy + y_col0 + n] receives output n.
layout(push_constant) uniform P { uint n, k, ldy, y_col0; } p;

#include "matmul_load.glsl"

shared float partial[MAX_SUBGROUPS][M * R];

void main() {
  const uint n0 = (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * R;
  if (n0 >= p.n) return;  // uniform across the workgroup
  const uint K = p.k, lid = gl_LocalInvocationID.x, WG = gl_WorkGroupSize.x;

  float acc[M][R];
  [[unroll]] for (uint m = 0; m < M; ++m)
    [[unroll]] for (uint r = 0; r < R; ++r) acc[m][r] = 0.0;
  uint wrow[R];  // first element of each weight row; rows past the end repeat the last one
  [[unroll]] for (uint r = 0; r < R; ++r) wrow[r] = min(n0 + r, p.n - 1u) * K;

  if (VEC == 8u) {
    for (uint k = lid * 8u; k < K; k += WG * 8u) {
      vec4 xlo[M], xhi[M];
      [[unroll]] for (uint m = 0; m < M; ++m) {
        xlo[m] = load_x4(m * K + k);
        xhi[m] = load_x4(m * K + k + 4u);
      }
      [[unroll]] for (uint r = 0; r < R; ++r) {
        vec4 lo, hi;
        load_w8(wrow[r] + k, lo, hi);
        [[unroll]] for (uint m = 0; m < M; ++m) acc[m][r] += dot(xlo[m], lo) + dot(xhi[m], hi);
      }
    }
  } else if (VEC == 4u) {
    for (uint k = lid * 4u; k < K; k += WG * 4u) {
      vec4 xv[M];
      [[unroll]] for (uint m = 0; m < M; ++m) xv[m] = load_x4(m * K + k);
      [[unroll]] for (uint r = 0; r < R; ++r) {
        const vec4 wv = load_w4(wrow[r] + k);
        [[unroll]] for (uint m = 0; m < M; ++m) acc[m][r] += dot(xv[m], wv);
      }
    }
  } else {
    for (uint k = lid; k < K; k += WG) {
      float xv[M];
      [[unroll]] for (uint m = 0; m < M; ++m) xv[m] = load_x1(m * K + k);
      [[unroll]] for (uint r = 0; r < R; ++r) {
        const float wv = load_w1(wrow[r] + k);
        [[unroll]] for (uint m = 0; m < M; ++m) acc[m][r] += xv[m] * wv;
      }
    }
  }

  [[unroll]] for (uint m = 0; m < M; ++m)
    [[unroll]] for (uint r = 0; r < R; ++r) {
      const float s = subgroupAdd(acc[m][r]);
      if (subgroupElect()) partial[gl_SubgroupID][m * R + r] = s;
    }
  barrier();
  for (uint t = lid; t < M * R; t += WG) {
    const uint m = t / R, n = n0 + t % R;
    if (n >= p.n) continue;
    float s = 0.0;
    for (uint g = 0; g < gl_NumSubgroups; ++g) s += partial[g][t];
    y[m * p.ldy + p.y_col0 + n] = s;
  }
}
