#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#include "common.glsl"
// y[m, n] = sum_k x[m, k] * w[n, k] for CPU implementations (llvmpipe), where a buffer load is a
// scalar loop over the lanes that costs ~25 cycles per lane and component whatever the
// component's width, while ALU work and subgroupBroadcast run as SIMD. So every load is 64 bits
// wide, and loads are shared: a subgroup owns TM activation rows, each lane loads one 64-bit
// pair of every row per K-chunk and broadcasts it to the others, while each lane streams its own
// TN weight rows. Needs K even (f32 weights) or a multiple of 4 (f16) for the 64-bit loads, and a
// subgroup size fixed at pipeline creation (the host sizes the grid with it).
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint TM = 8;  // activation rows per subgroup
layout(constant_id = 2) const uint TN = 8;  // weight rows per lane
layout(constant_id = 3) const bool W_F16 = true;

layout(binding = 0) readonly buffer X { uint64_t x2[]; };  // f32 pairs
layout(binding = 1) readonly buffer W { uint64_t w8[]; };  // 4 halves or 2 floats
layout(binding = 2) writeonly buffer Y { float y[]; };
// m, n: rows of x and w in this dispatch; tiles_n = ceil(n / (subgroup size * TN));
// y[row * ldy + y_col0 + col] receives output (row, col).
layout(push_constant) uniform P { uint m, n, k, ldy, y_col0, tiles_n; } p;

vec2 f32x2(uint64_t v) { return uintBitsToFloat(unpackUint2x32(v)); }
vec4 f16x4(uint64_t v) {
  const uvec2 u = unpackUint2x32(v);
  return vec4(unpackHalf2x16(u.x), unpackHalf2x16(u.y));
}

void main() {
  const uint SG = gl_SubgroupSize, lane = gl_SubgroupInvocationID;
  const uint sg = (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * gl_NumSubgroups + gl_SubgroupID;
  if (sg >= (p.m + TM - 1u) / TM * p.tiles_n) return;  // uniform across the subgroup
  const uint m0 = (sg / p.tiles_n) * TM, n0 = (sg % p.tiles_n) * SG * TN + lane * TN;
  const uint K = p.k;

  uint xrow[TM], wrow[TN];  // first element of each row; rows past the end repeat the last one
  [[unroll]] for (uint i = 0; i < TM; ++i) xrow[i] = min(m0 + i, p.m - 1u) * K;
  [[unroll]] for (uint j = 0; j < TN; ++j) wrow[j] = min(n0 + j, p.n - 1u) * K;
  float acc[TM][TN];
  [[unroll]] for (uint i = 0; i < TM; ++i)
    [[unroll]] for (uint j = 0; j < TN; ++j) acc[i][j] = 0.0;

  // One chunk = 2 * SG elements of K: lane l holds elements 2l, 2l + 1 of every activation row.
  for (uint k = 0; k < K; k += 2u * SG) {
    const uint kx = k + 2u * lane;
    vec2 xp[TM];
    [[unroll]] for (uint i = 0; i < TM; ++i) xp[i] = kx < K ? f32x2(x2[(xrow[i] + kx) >> 1u]) : vec2(0.0);
    if (W_F16) {
      for (uint q = 0; q < SG && k + 2u * q < K; q += 2u) {  // 4 halves = pairs q, q + 1
        vec4 wv[TN];
        [[unroll]] for (uint j = 0; j < TN; ++j) wv[j] = f16x4(w8[(wrow[j] + k + 2u * q) >> 2u]);
        [[unroll]] for (uint i = 0; i < TM; ++i) {
          const vec4 a = vec4(subgroupBroadcast(xp[i], q), subgroupBroadcast(xp[i], q + 1u));
          [[unroll]] for (uint j = 0; j < TN; ++j) acc[i][j] += dot(a, wv[j]);
        }
      }
    } else {
      for (uint q = 0; q < SG && k + 2u * q < K; ++q) {  // 2 floats = pair q
        vec2 wv[TN];
        [[unroll]] for (uint j = 0; j < TN; ++j) wv[j] = f32x2(w8[(wrow[j] + k + 2u * q) >> 1u]);
        [[unroll]] for (uint i = 0; i < TM; ++i) {
          const vec2 a = subgroupBroadcast(xp[i], q);
          [[unroll]] for (uint j = 0; j < TN; ++j) acc[i][j] += dot(a, wv[j]);
        }
      }
    }
  }

  [[unroll]] for (uint i = 0; i < TM; ++i)
    [[unroll]] for (uint j = 0; j < TN; ++j)
      if (m0 + i < p.m && n0 + j < p.n) y[(m0 + i) * p.ldy + p.y_col0 + n0 + j] = acc[i][j];
}
