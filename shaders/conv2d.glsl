// Body of conv2d*.comp (layouts in engine/ops/conv2d.h). Define before including:
//   SHARED_WEIGHTS  1: the subgroup shares the weight loads (below; needs subgroup ballot)
//   X_PAIRS         1: x is read two channels per 64-bit load (Ci even; needs shaderInt64),
//                   which halves the input loads on CPU drivers, where a load costs the same per
//                   lane whatever its width up to 64 bits.
//
// Each invocation computes CO_BLOCK output channels x PX_BLOCK consecutive pixels of one output
// row in registers; no shared memory, no barriers. Per kernel row and input channel it loads the
// NIN input pixels it touches once and applies all KW taps to them.
//
// The output-channel block is the same for a whole workgroup, so every invocation needs the same
// weights. With SHARED_WEIGHTS the LANES lanes of a subgroup (LANES = gl_SubgroupSize, fixed at
// pipeline creation) load them once between them and pass them round with subgroupShuffle to a
// constant lane: CPU drivers issue each buffer load lane by lane at tens of cycles per element, a
// shuffle is one vector permute (subgroupBroadcast is a loop over the lanes on llvmpipe). Without
// it every invocation loads its own (GPUs, where uniform loads are cached and shuffles cost ALU
// time).
#if SHARED_WEIGHTS
#extension GL_KHR_shader_subgroup_shuffle : require
#endif
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint KH = 3;
layout(constant_id = 2) const uint KW = 3;
layout(constant_id = 3) const uint STRIDE = 1;
layout(constant_id = 4) const uint CO_BLOCK = 16;
layout(constant_id = 5) const uint PX_BLOCK = 8;
layout(constant_id = 6) const uint LANES = 8;  // used with SHARED_WEIGHTS

#if X_PAIRS
layout(binding = 0) readonly buffer X { uint64_t x2[]; };
const uint CI_STEP = 2;
#else
layout(binding = 0) readonly buffer X { float x[]; };
const uint CI_STEP = 1;
#endif
layout(binding = 1) readonly buffer Wt { uint w[]; };  // f16: two halves per word; f32: float bits
layout(binding = 2) readonly buffer B { float bias[]; };
layout(binding = 3) readonly buffer R { float res[]; };
layout(binding = 4) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint H, W, Ci, Ho, Wo, Co;
  int pad_top, pad_left;
  uint row_blocks;    // ceil(Wo / PX_BLOCK)
  uint total_blocks;  // N * Ho * row_blocks
  uint weight_f16;    // weights are packed halves
  uint residual;      // add res to the output
} p;

const uint NIN = (PX_BLOCK - 1) * STRIDE + KW;  // input columns an output block touches per row
const uint TAPS = CI_STEP * CO_BLOCK * KW;      // weights one kernel row and step need
const uint ROUNDS = (TAPS + LANES - 1) / LANES;  // cooperative loads per lane

// Weight element e, f16 or f32, with one load and no branch.
float load_w(uint e) {
  const bool f16 = p.weight_f16 != 0;
  const uint u = w[f16 ? e >> 1 : e];
  return f16 ? unpackHalf2x16(u)[e & 1] : uintBitsToFloat(u);
}

// Channels ci .. ci + CI_STEP - 1 of input element offset e (e = pixel * Ci + ci).
void load_x(uint e, out float v[CI_STEP]) {
#if X_PAIRS
  const uvec2 u = unpackUint2x32(x2[e >> 1]);
  v[0] = uintBitsToFloat(u.x);
  v[1] = uintBitsToFloat(u.y);
#else
  v[0] = x[e];
#endif
}

void main() {
  const uint linear = gl_GlobalInvocationID.x + gl_WorkGroupID.z * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  // Invocations past the end compute the last block again (with SHARED_WEIGHTS every lane must
  // take part in the broadcasts); they store nothing.
  const bool live = linear < p.total_blocks;
  const uint block = min(linear, p.total_blocks - 1);
  const uint row = block / p.row_blocks;  // n * Ho + oy
  const uint ox0 = (block - row * p.row_blocks) * PX_BLOCK;
  const uint n = row / p.Ho, oy = row - n * p.Ho;
  const uint co0 = gl_WorkGroupID.y * CO_BLOCK;
  const uint KK = KH * KW;
  const uint wrow = p.Ci * KK;  // weights per output channel

  // Input columns, clamped into the image; taps outside it (padding) use zero.
  uint xcol[NIN];
  bool colok[NIN];
  [[unroll]] for (uint j = 0; j < NIN; ++j) {
    const int ix = int(ox0 * STRIDE + j) - p.pad_left;
    colok[j] = ix >= 0 && ix < int(p.W);
    xcol[j] = uint(clamp(ix, 0, int(p.W) - 1)) * p.Ci;
  }

  // A partial last channel block repeats the last channel; those outputs are never stored.
  uint wco[CO_BLOCK];
  float acc[CO_BLOCK][PX_BLOCK];
  [[unroll]] for (uint r = 0; r < CO_BLOCK; ++r) {
    const uint co = min(co0 + r, p.Co - 1);
    wco[r] = co * wrow;
    const float b = bias[co];
    [[unroll]] for (uint j = 0; j < PX_BLOCK; ++j) acc[r][j] = b;
  }
  // Round t of the cooperative load fetches weight idx = t * LANES + lane of the step:
  // channel offset a = idx / (CO_BLOCK * KW), output channel r, column kx.
#if SHARED_WEIGHTS
  uint woff[ROUNDS];
  [[unroll]] for (uint t = 0; t < ROUNDS; ++t) {
    const uint idx = min(t * LANES + gl_SubgroupInvocationID, TAPS - 1);
    const uint a = idx / (CO_BLOCK * KW), rk = idx - a * (CO_BLOCK * KW);
    const uint r = rk / KW;
    woff[t] = min(co0 + r, p.Co - 1) * wrow + a * KK + (rk - r * KW);
  }
#endif

  for (uint ky = 0; ky < KH; ++ky) {
    const int iy = int(oy * STRIDE + ky) - p.pad_top;
    const bool rowok = iy >= 0 && iy < int(p.H);
    const uint rowbase = (n * p.H + uint(clamp(iy, 0, int(p.H) - 1))) * p.W * p.Ci;
    for (uint ci = 0; ci < p.Ci; ci += CI_STEP) {
      float xin[NIN][CI_STEP];
      [[unroll]] for (uint j = 0; j < NIN; ++j) {
        float v[CI_STEP];
        load_x(rowbase + xcol[j] + ci, v);
        [[unroll]] for (uint a = 0; a < CI_STEP; ++a) xin[j][a] = rowok && colok[j] ? v[a] : 0.0;
      }
      const uint wk = ci * KK + ky * KW;
#if SHARED_WEIGHTS
      float wr[ROUNDS];
      [[unroll]] for (uint t = 0; t < ROUNDS; ++t) wr[t] = load_w(woff[t] + wk);
#endif
      [[unroll]] for (uint a = 0; a < CI_STEP; ++a)
        [[unroll]] for (uint r = 0; r < CO_BLOCK; ++r)
          [[unroll]] for (uint kx = 0; kx < KW; ++kx) {
#if SHARED_WEIGHTS
            const uint idx = (a * CO_BLOCK + r) * KW + kx;
            const float wv = subgroupShuffle(wr[idx / LANES], idx % LANES);
#else
            const float wv = load_w(wco[r] + a * KK + wk + kx);
#endif
            [[unroll]] for (uint j = 0; j < PX_BLOCK; ++j) acc[r][j] = fma(wv, xin[j * STRIDE + kx][a], acc[r][j]);
          }
    }
  }

  if (!live) return;
  const uint obase = row * p.Wo;
  [[unroll]] for (uint j = 0; j < PX_BLOCK; ++j) {
    if (ox0 + j >= p.Wo) break;
    const uint o = (obase + ox0 + j) * p.Co + co0;
    [[unroll]] for (uint r = 0; r < CO_BLOCK; ++r) {
      if (co0 + r >= p.Co) break;
      float v = acc[r][j];
      if (p.residual != 0) v += res[o + r];
      y[o + r] = v;
    }
  }
}
