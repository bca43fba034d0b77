// The GEMV kernel's body: matmul_gemv.comp, and matmul_gemv_rope_kv.comp with the q|k|v
// projection's RoPE and cache write in its stores (rope_kv_fold.glsl).
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"
// y[m, n] = sum_k x[m, k] * w[n, k] for a handful of activation rows (decoding, CFG pairs) up to a
// verification window's (GPUs: 64). Bound by weight bandwidth, so each workgroup streams R weight
// rows exactly once with 16-byte loads and applies every loaded vector to all M activation rows;
// the K-reduction is spread over the workgroup and folded with subgroupAdd, then across subgroups
// through shared memory (one barrier per workgroup). A tiled matmul on 16-64 rows leaves most of a
// GPU idle (one workgroup per 64 outputs) and waits on its K loop; this one has N / R workgroups.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint M = 1;               // activation rows compiled for, 1..64
layout(constant_id = 2) const uint R = 2;               // weight rows (outputs) per workgroup
layout(constant_id = 3) const uint MAX_SUBGROUPS = 64;  // workgroup size / smallest subgroup size
layout(constant_id = 4) const bool W_F16 = true;
// 8 or 4: K is a multiple of it, so every row starts on a vector boundary; 1: any K.
layout(constant_id = 5) const uint VEC = 8;
// x holds [m, 2k]: a in columns [0, k), b in [k, 2k), and the kernel multiplies by silu(a) * b
// as it loads (the FFN's down projection without a separate gate dispatch: one dispatch fewer per
// layer for decoding, where every dispatch's latency counts on a GPU; silu.glsl's expression, so
// the sums are those of the unfused pair).
layout(constant_id = 6) const bool X_SWIGLU = false;
#define FOLD_NORM_ID 7
#define FOLD_ACCUMULATE_ID 8
#include "matmul_fold.glsl"
#ifdef ROPE_KV_FOLD
layout(constant_id = 9) const uint CACHE_F16 = 0;
#define ROPE_KV_FIELDS ROPE_KV_PUSH
#else
#define ROPE_KV_FIELDS
#endif

layout(binding = 0) readonly buffer X { vec4 x4[]; };
layout(binding = 1) readonly buffer W { uvec4 w4[]; };
layout(binding = 2) buffer Y { float y[]; };              // read only where Y_ACCUMULATE
layout(binding = 3) readonly buffer G { vec4 g4[]; };     // the norm's weight, f32 (X_NORM)
// m: activation rows present (<= M: the host rounds M up to few pipelines; rows past m repeat the
// last one and are not written); n: weight rows in this dispatch; y[m * ldy + y_col0 + n]
// receives output n; eps: the norm's (X_NORM).
layout(push_constant) uniform P {
  uint m, n, k, ldy, y_col0;
  float eps;
  ROPE_KV_FIELDS
} p;
#ifdef ROPE_KV_FOLD
#define ROPE_KV_BINDING0 4
#include "rope_kv_fold.glsl"
#endif

#include "matmul_load.glsl"
#include "silu.glsl"

// Each subgroup's M x R sums, then (X_NORM) its share of each row's sum of squares.
shared float partial[MAX_SUBGROUPS][M * R + M];

// Activations at element k of the row starting at e (the gate applied where X_SWIGLU).
vec4 x4_at(uint e, uint k) {
  return X_SWIGLU ? silu_times(load_x4(e + k), load_x4(e + p.k + k)) : load_x4(e + k);
}
float x1_at(uint e, uint k) {
  return X_SWIGLU ? silu_times(load_x1(e + k), load_x1(e + p.k + k)) : load_x1(e + k);
}

#define FOLD_ROWS M
#include "gemv_fold.glsl"

void main() {
  const uint n0 = (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * R;
  if (n0 >= p.n) return;  // uniform across the workgroup
  const uint K = p.k, lid = gl_LocalInvocationID.x, WG = gl_WorkGroupSize.x;

  float acc[M][R];
  [[unroll]] for (uint m = 0; m < M; ++m)
    [[unroll]] for (uint r = 0; r < R; ++r) acc[m][r] = 0.0;
  uint wrow[R];  // first element of each weight row; rows past the end repeat the last one
  [[unroll]] for (uint r = 0; r < R; ++r) wrow[r] = min(n0 + r, p.n - 1u) * K;
  uint xrow[M];
  [[unroll]] for (uint m = 0; m < M; ++m) xrow[m] = min(m, p.m - 1u) * (X_SWIGLU ? 2u * K : K);

#define GEMV_ROWS M
#define GEMV_LANE lid
#define GEMV_LANES WG
#define GEMV_X4(e, k) x4_at(e, k)
#define GEMV_X1(e, k) x1_at(e, k)
#define GEMV_FOLD(m, k, x) fold_x(m, k, x)
  [[unroll]] for (uint m = 0; m < M; ++m) fold_ss[m] = 0.0;
#include "gemv_k_loop.glsl"

  [[unroll]] for (uint m = 0; m < M; ++m)
    [[unroll]] for (uint r = 0; r < R; ++r) {
      const float s = subgroupAdd(acc[m][r]);
      if (subgroupElect()) partial[gl_SubgroupID][m * R + r] = s;
    }
  if (X_NORM)
    [[unroll]] for (uint m = 0; m < M; ++m) {
      const float ss = subgroupAdd(fold_ss[m]);
      if (subgroupElect()) partial[gl_SubgroupID][M * R + m] = ss;
    }
  barrier();
#ifdef ROPE_KV_FOLD
  // Output pairs: R is even and n0 a multiple of R, so each pair of a head is in this workgroup.
  for (uint t = lid; t < M * (R / 2u); t += WG) {
    const uint m = t / (R / 2u), j = 2u * (t % (R / 2u)), n = n0 + j;
    if (n >= p.n || m >= p.m) continue;
    vec2 s = vec2(0.0);
    float ss = 0.0;
    for (uint g = 0; g < gl_NumSubgroups; ++g) s.x += partial[g][m * R + j];
    for (uint g = 0; g < gl_NumSubgroups; ++g) s.y += partial[g][m * R + j + 1u];
    if (X_NORM)
      for (uint g = 0; g < gl_NumSubgroups; ++g) ss += partial[g][M * R + m];
    if (X_NORM) s = s * rms_scale(ss, K, p.eps);
    rope_kv_store(rope_kv_row(m), p.y_col0 + n, m * p.ldy + p.y_col0 + n, s);
  }
#else
  for (uint t = lid; t < M * R; t += WG) {
    const uint m = t / R, n = n0 + t % R;
    if (n >= p.n || m >= p.m) continue;
    float s = 0.0, ss = 0.0;
    for (uint g = 0; g < gl_NumSubgroups; ++g) s += partial[g][t];
    if (X_NORM)
      for (uint g = 0; g < gl_NumSubgroups; ++g) ss += partial[g][M * R + m];
    store_y(y[m * p.ldy + p.y_col0 + n], s, X_NORM ? rms_scale(ss, K, p.eps) : 1.0);
  }
#endif
}
