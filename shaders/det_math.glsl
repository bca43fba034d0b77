// Bit-for-bit mirror of engine/ops/det_math.h (see there for why and for the exact semantics).
// Every intermediate is `precise` so that no multiply-add is fused into an FMA: the results must
// equal the CPU's, not just be close.

uint order_key(float x) {
  const uint b = x == 0.0 ? 0u : floatBitsToUint(x);
  return (b & 0x80000000u) != 0u ? ~b : (b | 0x80000000u);
}
float key_float(uint k) { return uintBitsToFloat((k & 0x80000000u) != 0u ? (k & 0x7FFFFFFFu) : ~k); }

const float kExpCutoff = -64.0;
const float kLog2e = 1.44269502;
const float kLn2Hi = 0.693359375;
const float kLn2Lo = -2.12194440e-4;
const float kSqrt2 = 1.41421354;
const float kFloatMin = 1.17549435e-38;

float exp_det(float x) {
  if (!(x >= kExpCutoff)) return 0.0;
  if (x > 64.0) x = 64.0;
  precise float t = x * kLog2e;
  t = t + 0.5;
  const float k = floor(t);
  precise float a = k * kLn2Hi;
  precise float r = x - a;
  a = k * kLn2Lo;
  r = r - a;
  precise float e = 1.98412701e-4;
  e = e * r;
  e = e + 1.38888892e-3;
  e = e * r;
  e = e + 8.33333377e-3;
  e = e * r;
  e = e + 4.16666679e-2;
  e = e * r;
  e = e + 1.66666672e-1;
  e = e * r;
  e = e + 0.5;
  precise float y = r * r;
  y = y * e;
  y = r + y;
  y = 1.0 + y;
  const float scale = uintBitsToFloat(uint(int(k) + 127) << 23);
  precise float res = y * scale;
  return res;
}

float log_det(float x) {
  if (!(x >= kFloatMin)) return uintBitsToFloat(0xFF800000u);
  const uint b = floatBitsToUint(x);
  int ex = int(b >> 23) - 127;
  precise float m = uintBitsToFloat((b & 0x007FFFFFu) | 0x3F800000u);
  if (m > kSqrt2) {
    m = m * 0.5;
    ex = ex + 1;
  }
  precise float f = m - 1.0;
  precise float q = -7.673641294e-02;
  q = q * f;
  q = q + 1.272267252e-01;
  q = q * f;
  q = q + -1.312755495e-01;
  q = q * f;
  q = q + 1.420485526e-01;
  q = q * f;
  q = q + -1.662664562e-01;
  q = q * f;
  q = q + 2.000123411e-01;
  q = q * f;
  q = q + -2.500078082e-01;
  q = q * f;
  q = q + 3.333333135e-01;
  q = q * f;
  q = q + -4.999999702e-01;
  const float fe = float(ex);
  precise float r = f * f;
  r = r * q;
  precise float lo = fe * kLn2Lo;
  r = r + lo;
  r = f + r;
  precise float hi = fe * kLn2Hi;
  precise float res = hi + r;
  return res;
}

float recip_det(float x) {
  const uint b = floatBitsToUint(x);
  const int ex = int(b >> 23) - 126;
  const float m = uintBitsToFloat((b & 0x007FFFFFu) | 0x3F000000u);
  precise float r = m * 1.88235295;
  r = 2.82352948 - r;
  for (int i = 0; i < 4; ++i) {
    precise float t = m * r;
    t = 2.0 - t;
    r = r * t;
  }
  precise float res = r * uintBitsToFloat(uint(127 - ex) << 23);
  return res;
}

const uint kMaxChunks = 256u;

uint chunk_size(uint n) {
  const uint c = (n + kMaxChunks - 1u) / kMaxChunks;
  return c == 0u ? 4u : (c + 3u) & ~3u;
}
uint chunk_count(uint n) { return (n + chunk_size(n) - 1u) / chunk_size(n); }
uint tree_leaves(uint n) {
  uint p = 1u;
  while (p < chunk_count(n)) p *= 2u;
  return p;
}
