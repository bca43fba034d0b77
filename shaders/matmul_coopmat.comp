#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#include "common.glsl"
// y[m, n] = sum_k x[m, k] * w[n, k] on tensor cores (GL_NV_cooperative_matrix, or KHR through
// engine/vk/coopmat_khr.h): fp16 inputs, f32 accumulation. A workgroup of WARPS_M x WARPS_N
// subgroups owns a BM x BN tile of y; each subgroup owns 2 x 2 fragments of 16 x 16. Per
// BK-slice of K the workgroup converts x and w to fp16 in shared memory (zero outside the
// matrices, so any M, N, K works), then every subgroup multiplies its fragments from there.
// Verification windows (16-130 rows) make few workgroups with a long K loop, so the time is the
// loop's latency, not arithmetic: the H100 spent about 2.5 us per slice whatever M and N were
// (docs/perf.md), because each invocation loaded, converted and stored one vector at a time.
// Each slice's loads are therefore issued together into registers, one slice ahead: they are in
// flight while the subgroups multiply the previous slice.
layout(local_size_x_id = 0) in;  // subgroup size * WARPS_M * WARPS_N
layout(constant_id = 1) const uint WARPS_M = 2;
layout(constant_id = 2) const uint WARPS_N = 2;
layout(constant_id = 3) const bool W_F16 = true;
// 4: K % 4 == 0, so tiles are filled with 16-byte (x) and 8-byte (f16 w) loads; 1: any K.
layout(constant_id = 4) const uint VEC = 4;
layout(constant_id = 5) const uint BK = 64;  // K per slice, a multiple of 16
// B's fragments are 16 x 16 too, but a type of their own (dimensions from a constant the host
// never sets): on devices that run this kernel through VK_KHR_cooperative_matrix, A and B types
// carry their use, which engine/vk/coopmat_khr.h reads off the multiply-adds.
layout(constant_id = 6) const uint FRAG_B = 16;

const uint FRAG = 16, FRAGS = 2;
const uint BM = WARPS_M * FRAGS * FRAG, BN = WARPS_N * FRAGS * FRAG;
const uint WG = gl_WorkGroupSize.x;
// Vectors of 4 elements each invocation carries per slice, of x and of w.
const uint XV = (BM * BK / 4u + WG - 1u) / WG, WV = (BN * BK / 4u + WG - 1u) / WG;

layout(binding = 0) readonly buffer X { vec4 x4[]; };
layout(binding = 1) readonly buffer W { uvec4 w4[]; };
layout(binding = 2) writeonly buffer Y { float y[]; };
// m, n: rows of x and w in this dispatch; y[row * ldy + y_col0 + col] receives output (row, col).
layout(push_constant) uniform P { uint m, n, k, ldy, y_col0; } p;

#include "matmul_load.glsl"

shared float16_t xs[BM * BK];  // [BM][BK]
shared float16_t ws[BN * BK];  // [BN][BK], read as a column-major BK x BN matrix
shared float staged[WARPS_M * WARPS_N][FRAG * FRAG];

vec4 xr[XV], wr[WV];  // the next slice, in flight

// Elements [k, k + 4) of row r of x (or w), zero outside the matrix.
vec4 fetch(bool is_w, uint r, uint limit, uint k) {
  vec4 v = vec4(0.0);
  if (r >= limit) return v;
  const uint K = p.k, e = r * K + k;
  if (VEC == 4u) {
    if (k < K) v = is_w ? load_w4(e) : load_x4(e);
  } else {
    [[unroll]] for (uint j = 0; j < 4u; ++j)
      if (k + j < K) v[j] = is_w ? load_w1(e + j) : load_x1(e + j);
  }
  return v;
}

// Issues every load of the slice at k0 (vector c of an invocation is element 4 * (c * WG + lid) of
// the tile) without waiting for any of them.
void load_slice(uint m_base, uint n_base, uint k0) {
  const uint lid = gl_LocalInvocationID.x;
  [[unroll]] for (uint c = 0; c < XV; ++c) {
    const uint i = (c * WG + lid) * 4u;
    xr[c] = i < BM * BK ? fetch(false, m_base + i / BK, p.m, k0 + i % BK) : vec4(0.0);
  }
  [[unroll]] for (uint c = 0; c < WV; ++c) {
    const uint i = (c * WG + lid) * 4u;
    wr[c] = i < BN * BK ? fetch(true, n_base + i / BK, p.n, k0 + i % BK) : vec4(0.0);
  }
}

void store_slice() {
  const uint lid = gl_LocalInvocationID.x;
  [[unroll]] for (uint c = 0; c < XV; ++c) {
    const uint i = (c * WG + lid) * 4u;
    if (i < BM * BK)
      [[unroll]] for (uint j = 0; j < 4u; ++j) xs[i + j] = float16_t(xr[c][j]);
  }
  [[unroll]] for (uint c = 0; c < WV; ++c) {
    const uint i = (c * WG + lid) * 4u;
    if (i < BN * BK)
      [[unroll]] for (uint j = 0; j < 4u; ++j) ws[i + j] = float16_t(wr[c][j]);
  }
}

void main() {
  const uint sg = gl_SubgroupID, wm = sg / WARPS_N, wn = sg % WARPS_N;
  const uint m_base = gl_WorkGroupID.y * BM, n_base = gl_WorkGroupID.x * BN;

  fcoopmatNV<32, gl_ScopeSubgroup, FRAG, FRAG> acc[FRAGS][FRAGS];
  [[unroll]] for (uint i = 0; i < FRAGS; ++i)
    [[unroll]] for (uint j = 0; j < FRAGS; ++j) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, FRAG, FRAG>(0.0);

  load_slice(m_base, n_base, 0);
  for (uint k0 = 0; k0 < p.k; k0 += BK) {
    store_slice();
    barrier();
    if (k0 + BK < p.k) load_slice(m_base, n_base, k0 + BK);
    [[unroll]] for (uint kk = 0; kk < BK; kk += FRAG) {
      fcoopmatNV<16, gl_ScopeSubgroup, FRAG, FRAG> a[FRAGS];
      fcoopmatNV<16, gl_ScopeSubgroup, FRAG_B, FRAG_B> b[FRAGS];
      [[unroll]] for (uint i = 0; i < FRAGS; ++i)
        coopMatLoadNV(a[i], xs, ((wm * FRAGS + i) * FRAG) * BK + kk, BK, false);
      [[unroll]] for (uint j = 0; j < FRAGS; ++j)
        coopMatLoadNV(b[j], ws, ((wn * FRAGS + j) * FRAG) * BK + kk, BK, true);
      [[unroll]] for (uint i = 0; i < FRAGS; ++i)
        [[unroll]] for (uint j = 0; j < FRAGS; ++j) acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);
    }
    barrier();
  }

  // Fragments go through shared memory so edge tiles can be written element by element.
  [[unroll]] for (uint i = 0; i < FRAGS; ++i)
    [[unroll]] for (uint j = 0; j < FRAGS; ++j) {
      coopMatStoreNV(acc[i][j], staged[sg], 0, FRAG, false);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      const uint row0 = m_base + (wm * FRAGS + i) * FRAG, col0 = n_base + (wn * FRAGS + j) * FRAG;
      for (uint e = gl_SubgroupInvocationID; e < FRAG * FRAG; e += gl_SubgroupSize) {
        const uint r = row0 + e / FRAG, c = col0 + e % FRAG;
        if (r < p.m && c < p.n) y[r * p.ldy + p.y_col0 + c] = staged[sg][e];
      }
      subgroupBarrier();
    }
}
