#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_samplerless_texture_functions : require
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"
#include "silu.glsl"
// y[m, n] = sum_k x[m, k] * w[n, k] for CPU implementations (llvmpipe), where a storage-buffer
// load is a scalar loop over the lanes, a texel fetch is one vector gather, and ALU work and
// shuffles to a constant lane run as SIMD (docs/perf.md, "What limits matmul on lavapipe"). So
// weights come through a uniform texel buffer, 16 bytes a fetch, and activation loads are shared:
// a subgroup owns TM activation rows, each lane loads one 64-bit pair of every row per K-chunk and
// the others read it by subgroupShuffle, while each lane streams its own TN weight rows.
// (A shuffle, not subgroupBroadcast: llvmpipe builds a broadcast as a loop over the lanes in
// search of an active one; docs/perf.md, "Lane reads on lavapipe".)
// Needs K a multiple of 8 (f16 weights) or 4 (f32) so a weight row starts on a texel, a subgroup
// size that is a multiple of 4 (f16) or 2 (f32), fixed at pipeline creation and equal to the
// workgroup size (the host sizes the grid with it). The lane loops run to the workgroup size, a
// specialization constant, so they unroll and every shuffle reads a constant lane: one vector
// permute, where a lane index the compiler cannot see costs a trip through memory.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint TM = 8;  // activation rows per subgroup
layout(constant_id = 2) const uint TN = 8;  // weight rows per lane
layout(constant_id = 3) const bool W_F16 = true;
// x holds [m, 2k]: a in columns [0, k), b in [k, 2k), and the kernel multiplies silu(a) * b
// (LlamaGen's SwiGLU gate, the same expression as swiglu.comp), so the FFN's down projection needs
// no separate gate dispatch and no round trip of the hidden activations through memory.
layout(constant_id = 4) const bool X_SWIGLU = false;
#define FOLD_NORM_ID 5
#define FOLD_ACCUMULATE_ID 6
#include "matmul_fold.glsl"

layout(binding = 0) readonly buffer X { uint64_t x2[]; };  // f32 pairs
layout(binding = 1) uniform utextureBuffer w16;             // 8 halves or 4 floats per texel
layout(binding = 2) buffer Y { float y[]; };                // read only where Y_ACCUMULATE
layout(binding = 3) readonly buffer G { uint64_t g2[]; };  // the norm's weight, f32 pairs (X_NORM)
// m, n: rows of x and w in this dispatch; tiles_n = ceil(n / (subgroup size * TN));
// y[row * ldy + y_col0 + col] receives output (row, col); w_texel0: the texel where w starts;
// eps: the norm's (X_NORM).
layout(push_constant) uniform P { uint m, n, k, ldy, y_col0, tiles_n, w_texel0; float eps; } p;

vec2 f32x2(uint64_t v) { return uintBitsToFloat(unpackUint2x32(v)); }
vec4 f16x4(uint u0, uint u1) { return vec4(unpackHalf2x16(u0), unpackHalf2x16(u1)); }

void main() {
  const uint SG = gl_WorkGroupSize.x, lane = gl_SubgroupInvocationID;
  const uint sg = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (sg >= (p.m + TM - 1u) / TM * p.tiles_n) return;  // uniform across the subgroup
  const uint m0 = (sg / p.tiles_n) * TM, n0 = (sg % p.tiles_n) * SG * TN + lane * TN;
  const uint K = p.k, PER_TEXEL = W_F16 ? 8u : 4u;

  uint xrow[TM], wtex[TN];  // first element / texel of each row; rows past the end repeat the last
  [[unroll]] for (uint i = 0; i < TM; ++i) xrow[i] = min(m0 + i, p.m - 1u) * (X_SWIGLU ? 2u * K : K);
  [[unroll]] for (uint j = 0; j < TN; ++j) wtex[j] = p.w_texel0 + min(n0 + j, p.n - 1u) * (K / PER_TEXEL);
  float acc[TM][TN], ss[TM];  // ss: each row's sum of squares (X_NORM), this lane's share
  [[unroll]] for (uint i = 0; i < TM; ++i) {
    ss[i] = 0.0;
    [[unroll]] for (uint j = 0; j < TN; ++j) acc[i][j] = 0.0;
  }

  // One chunk = 2 * SG elements of K: lane l holds elements 2l, 2l + 1 of every activation row.
  for (uint k = 0; k < K; k += 2u * SG) {
    const uint kx = k + 2u * lane;
    vec2 xp[TM];
    [[unroll]] for (uint i = 0; i < TM; ++i) {
      xp[i] = kx < K ? f32x2(x2[(xrow[i] + kx) >> 1u]) : vec2(0.0);
      if (X_SWIGLU) {
        const vec2 b = kx < K ? f32x2(x2[(xrow[i] + K + kx) >> 1u]) : vec2(0.0);
        xp[i] = vec2(silu_times(xp[i].x, b.x), silu_times(xp[i].y, b.y));
      }
    }
    if (X_NORM) {
      const vec2 g = kx < K ? f32x2(g2[kx >> 1u]) : vec2(0.0);
      [[unroll]] for (uint i = 0; i < TM; ++i) {
        ss[i] += dot(xp[i], xp[i]);
        xp[i] *= g;
      }
    }
    // One texel = PER_TEXEL elements = pairs q .. q + PER_TEXEL / 2 - 1 of the chunk.
    [[unroll]] for (uint q = 0; q < SG; q += PER_TEXEL / 2u) {
      if (k + 2u * q >= K) break;
      const uint t = (k + 2u * q) / PER_TEXEL;
      uvec4 wv[TN];
      [[unroll]] for (uint j = 0; j < TN; ++j) wv[j] = texelFetch(w16, int(wtex[j] + t));
      [[unroll]] for (uint i = 0; i < TM; ++i) {
        const vec4 a = vec4(subgroupShuffle(xp[i], q), subgroupShuffle(xp[i], q + 1u));
        if (W_F16) {
          const vec4 b = vec4(subgroupShuffle(xp[i], q + 2u), subgroupShuffle(xp[i], q + 3u));
          // Two sums of four, in order: the rounding of the 64-bit-load kernel this replaced.
          [[unroll]] for (uint j = 0; j < TN; ++j) {
            acc[i][j] += dot(a, f16x4(wv[j].x, wv[j].y));
            acc[i][j] += dot(b, f16x4(wv[j].z, wv[j].w));
          }
        } else {
          [[unroll]] for (uint j = 0; j < TN; ++j) {
            const vec4 f = uintBitsToFloat(wv[j]);
            acc[i][j] += dot(a.xy, f.xy);
            acc[i][j] += dot(a.zw, f.zw);
          }
        }
      }
    }
  }

  [[unroll]] for (uint i = 0; i < TM; ++i) {
    const float scale = X_NORM ? rms_scale(subgroupAdd(ss[i]), K, p.eps) : 1.0;
    [[unroll]] for (uint j = 0; j < TN; ++j)
      if (m0 + i < p.m && n0 + j < p.n) store_y(y[(m0 + i) * p.ldy + p.y_col0 + n0 + j], acc[i][j], scale);
  }
}
