#pragma once
// Float arithmetic that gives the same bits on the CPU and on every Vulkan device.
//
// Vulkan only guarantees correct rounding for +, -, *, comparisons, floor and int<->float
// conversion; exp/log/division may differ by a few ulp between drivers, and denormals may be
// flushed. Everything here uses only the guaranteed operations, in a fixed order, and never
// produces a denormal, so sampling decisions (which token, keep or drop) are bit-identical between
// the CPU references, the decoding layer and the shaders. shaders/det_math.glsl mirrors every
// function operation for operation, with `precise` so the compiler fuses nothing into an FMA; the
// CPU side is built with -ffp-contract=off (top-level CMakeLists.txt) for the same reason.
//
// Fixed-order sums ("chunk trees"): a vector of n weights is cut into chunks of chunk_size(n)
// consecutive elements (at most kMaxChunks); each chunk is summed sequentially from its first
// element, and the chunk sums, zero-padded to P = tree_leaves(n) (a power of two), are combined in
// a heap: node[i] = node[2i] + node[2i+1] for i = P-1 .. 1, leaves at node[P + chunk], total at
// node[1]. The GPU kernels use one invocation per chunk and split the heap among invocations, so
// the order never depends on the workgroup or subgroup size.
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace vkspec::det {

inline uint32_t float_bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}
inline float bits_float(uint32_t b) {
  float x;
  std::memcpy(&x, &b, 4);
  return x;
}

// Order-preserving unsigned key of a float (a < b <=> key(a) < key(b) for non-NaN values);
// -0 and +0 share a key so that equal values are always ties.
inline uint32_t order_key(float x) {
  const uint32_t b = x == 0.0f ? 0u : float_bits(x);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
inline float key_float(uint32_t k) { return bits_float((k & 0x80000000u) ? (k & 0x7FFFFFFFu) : ~k); }

// Below this exp_det returns 0: e^-64 ~ 1.6e-28 keeps every probability (and its product with a
// 1/sum >= 2^-24) a normal float, so no device's denormal flushing can change a result.
constexpr float kExpCutoff = -64.0f;
constexpr float kLog2e = 1.44269502f;
constexpr float kLn2Hi = 0.693359375f;     // 9 significant bits: k * kLn2Hi is exact for |k| < 2^15
constexpr float kLn2Lo = -2.12194440e-4f;  // ln 2 - kLn2Hi
constexpr float kSqrt2 = 1.41421354f;
constexpr float kFloatMin = 1.17549435e-38f;  // smallest normal float

// e^x for x in [-64, 64] (clamped above; 0 below -64, for -inf and for NaN), within ~2 ulp.
// exp_det(0) == 1 exactly. Cody-Waite reduction x = k ln2 + r, |r| <= ln2/2, then
// e^r = 1 + r + r^2 E(r) with E the Taylor series of (e^r - 1 - r) / r^2 to r^5.
inline float exp_det(float x) {
  if (!(x >= kExpCutoff)) return 0.0f;
  if (x > 64.0f) x = 64.0f;
  float t = x * kLog2e;
  t = t + 0.5f;
  const float k = std::floor(t);
  float a = k * kLn2Hi;
  float r = x - a;
  a = k * kLn2Lo;
  r = r - a;
  float e = 1.98412701e-4f;  // 1/5040
  e = e * r;
  e = e + 1.38888892e-3f;  // 1/720
  e = e * r;
  e = e + 8.33333377e-3f;  // 1/120
  e = e * r;
  e = e + 4.16666679e-2f;  // 1/24
  e = e * r;
  e = e + 1.66666672e-1f;  // 1/6
  e = e * r;
  e = e + 0.5f;
  float y = r * r;
  y = y * e;
  y = r + y;
  y = 1.0f + y;
  const float scale = bits_float(static_cast<uint32_t>(static_cast<int32_t>(k) + 127) << 23);
  return y * scale;
}

// ln x for normal x > 0 (-inf for 0, denormals and negatives), within ~2 ulp. x = 2^e m with
// m in [sqrt(1/2), sqrt 2), f = m - 1 (exact), ln(1 + f) = f + f^2 Q(f) with Q a degree-8
// Chebyshev interpolant of (ln(1 + f) - f) / f^2 on that interval.
inline float log_det(float x) {
  if (!(x >= kFloatMin)) return -INFINITY;
  const uint32_t b = float_bits(x);
  int32_t ex = static_cast<int32_t>(b >> 23) - 127;
  float m = bits_float((b & 0x007FFFFFu) | 0x3F800000u);
  if (m > kSqrt2) {
    m = m * 0.5f;
    ex = ex + 1;
  }
  const float f = m - 1.0f;
  float q = -7.673641294e-02f;
  q = q * f;
  q = q + 1.272267252e-01f;
  q = q * f;
  q = q + -1.312755495e-01f;
  q = q * f;
  q = q + 1.420485526e-01f;
  q = q * f;
  q = q + -1.662664562e-01f;
  q = q * f;
  q = q + 2.000123411e-01f;
  q = q * f;
  q = q + -2.500078082e-01f;
  q = q * f;
  q = q + 3.333333135e-01f;
  q = q * f;
  q = q + -4.999999702e-01f;
  const float fe = static_cast<float>(ex);
  float r = f * f;
  r = r * q;
  float lo = fe * kLn2Lo;
  r = r + lo;
  r = f + r;
  const float hi = fe * kLn2Hi;
  return hi + r;
}

// 1 / x for normal x > 0 (tested on [2^-100, 2^100]), within ~2 ulp; the same bits everywhere
// (a GPU division may differ by a few ulp between drivers). x = m 2^(e+1) with m in [1/2, 1),
// r0 = 48/17 - 32/17 m (error <= 1/17), four Newton steps r = r (2 - m r), then the exponent.
inline float recip_det(float x) {
  const uint32_t b = float_bits(x);
  const int32_t ex = static_cast<int32_t>(b >> 23) - 126;
  const float m = bits_float((b & 0x007FFFFFu) | 0x3F000000u);
  float r = m * 1.88235295f;
  r = 2.82352948f - r;
  for (int i = 0; i < 4; ++i) {
    float t = m * r;
    t = 2.0f - t;
    r = r * t;
  }
  return r * bits_float(static_cast<uint32_t>(127 - ex) << 23);
}

// ---- chunk trees ----------------------------------------------------------------------------

constexpr uint32_t kMaxChunks = 256;

// Elements per chunk for a vector of n: a multiple of 4 so that every chunk starts on a Philox
// block (four draws), and large enough that n fits in kMaxChunks chunks.
inline uint32_t chunk_size(uint32_t n) {
  const uint32_t c = (n + kMaxChunks - 1) / kMaxChunks;
  return c == 0 ? 4u : (c + 3u) & ~3u;
}
inline uint32_t chunk_count(uint32_t n) { return (n + chunk_size(n) - 1) / chunk_size(n); }
// Leaves of the heap: the chunk count rounded up to a power of two.
inline uint32_t tree_leaves(uint32_t n) {
  uint32_t p = 1;
  while (p < chunk_count(n)) p *= 2;
  return p;
}

struct ChunkTree {
  uint32_t n = 0, chunk = 4, leaves = 1;
  std::array<float, 2 * kMaxChunks> node{};
  float total() const { return node[1]; }
};

// Sum of weight(i), i < n, in the fixed chunk-tree order; the tree is kept for descend().
template <class Weight>
ChunkTree chunk_tree(uint32_t n, Weight weight) {
  ChunkTree t;
  t.n = n;
  t.chunk = chunk_size(n);
  t.leaves = tree_leaves(n);
  for (uint32_t c = 0; c < t.leaves; ++c) {
    float s = 0.0f;
    const uint32_t begin = c * t.chunk, end = begin + t.chunk < n ? begin + t.chunk : n;
    for (uint32_t i = begin; i < end; ++i) s = s + weight(i);
    t.node[t.leaves + c] = s;
  }
  for (uint32_t i = t.leaves - 1; i >= 1; --i) t.node[i] = t.node[2 * i] + t.node[2 * i + 1];
  return t;
}

// Inverse-CDF walk for a target in [0, total): down the heap (left when target < left sum or the
// right subtree is empty, else subtract the left sum and go right), then along the chunk
// (subtract each weight until target < weight). Only nodes with a positive sum are entered, so
// the result always has a positive weight; if rounding walks past the chunk's last positive
// weight, that element is returned. Requires total() > 0.
template <class Weight>
uint32_t descend(const ChunkTree& t, float target, Weight weight) {
  uint32_t node = 1;
  while (node < t.leaves) {
    const float left = t.node[2 * node], right = t.node[2 * node + 1];
    if (target < left || right == 0.0f) {
      node = 2 * node;
    } else {
      target = target - left;
      node = 2 * node + 1;
    }
  }
  const uint32_t begin = (node - t.leaves) * t.chunk;
  const uint32_t end = begin + t.chunk < t.n ? begin + t.chunk : t.n;
  uint32_t last = begin;
  for (uint32_t i = begin; i < end; ++i) {
    const float w = weight(i);
    if (w > 0.0f) {
      last = i;
      if (target < w) return i;
      target = target - w;
    }
  }
  return last;
}

}  // namespace vkspec::det
