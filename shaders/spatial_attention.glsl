// Body of spatial_attention.comp / spatial_attention_shared.comp: single-head attention over
// the H*W positions of an image (the VQ AttnBlock's core), out = softmax(q k^T * scale) v with
// q, k, v, out [N, HW, C] f32. Online softmax: each invocation owns QB queries and walks the keys
// in blocks of KB, keeping QB x KB scores in registers, a running max and sum per query, and its
// output rows (C can be 512, too many for registers) in `out` itself, rescaled as the max grows;
// the last block divides by the sum.
//
// Keys and values are the same for every invocation. Define before including:
//   SHARED_KV  1: the LANES lanes of a subgroup (LANES = gl_SubgroupSize, fixed at pipeline
//              creation) load each block's k and v elements once between them and pass them
//              round with subgroupShuffle to constant lanes (needs subgroup shuffle); 0: each invocation loads
//              them (GPUs cache uniform loads).
//   X_PAIRS    1: every tensor is read (and out written) two channels per 64-bit access (C even;
//              needs shaderInt64).
// Both exist for CPU drivers, which issue every buffer access lane by lane at the same cost per
// lane for any width up to 64 bits, while a shuffle to a constant lane is one vector permute.
#if SHARED_KV
#extension GL_KHR_shader_subgroup_shuffle : require
#endif
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint QB = 4;
layout(constant_id = 2) const uint KB = 16;
layout(constant_id = 3) const uint LANES = 8;  // used with SHARED_KV

#if X_PAIRS
layout(binding = 0) readonly buffer Q { uint64_t q[]; };
layout(binding = 1) readonly buffer K { uint64_t k[]; };
layout(binding = 2) readonly buffer V { uint64_t v[]; };
layout(binding = 3) buffer O { uint64_t o[]; };  // read back as the accumulator
const uint CS = 2;  // channels per access
// Channels e, e + 1 (e even) of buf into dst[0..1], and back.
#define LOAD(buf, e, dst)                                         \
  {                                                               \
    const vec2 t_ = uintBitsToFloat(unpackUint2x32(buf[(e) >> 1])); \
    dst[0] = t_.x;                                                \
    dst[1] = t_.y;                                                \
  }
#define STORE(buf, e, src) buf[(e) >> 1] = packUint2x32(floatBitsToUint(vec2(src[0], src[1])))
#else
layout(binding = 0) readonly buffer Q { float q[]; };
layout(binding = 1) readonly buffer K { float k[]; };
layout(binding = 2) readonly buffer V { float v[]; };
layout(binding = 3) buffer O { float o[]; };  // read back as the accumulator
const uint CS = 1;
#define LOAD(buf, e, dst) dst[0] = buf[e]
#define STORE(buf, e, src) buf[e] = src[0]
#endif
layout(push_constant) uniform P {
  uint hw, c;
  uint query_blocks;  // ceil(hw / QB)
  float scale_log2;   // scale * log2(e): scores in base 2
} p;

const uint ROUNDS = (KB + LANES - 1) / LANES;  // cooperative loads per lane per step

void main() {
  const uint n = gl_WorkGroupID.y;
  const uint qblock = gl_GlobalInvocationID.x;
  // Invocations past the last query block repeat it (with SHARED_KV all lanes must join the
  // broadcasts) but never write.
  const bool live = qblock < p.query_blocks;
  const uint q0 = min(qblock, p.query_blocks - 1) * QB;
  const uint img = n * p.hw * p.c;
  uint qrow[QB];
  [[unroll]] for (uint i = 0; i < QB; ++i) qrow[i] = img + min(q0 + i, p.hw - 1) * p.c;
  // Rows past the end duplicate the last query; only distinct rows are written.
  const uint qcount = min(QB, p.hw - q0);

  float m[QB], l[QB];
  [[unroll]] for (uint i = 0; i < QB; ++i) {
    m[i] = -1.0 / 0.0;
    l[i] = 0.0;
  }

  for (uint kb0 = 0; kb0 < p.hw; kb0 += KB) {
    const bool first = kb0 == 0, last = kb0 + KB >= p.hw;
#if SHARED_KV
    // Keys this lane fetches for the others: key kb0 + t * LANES + lane in round t.
    uint krow[ROUNDS];
    [[unroll]] for (uint t = 0; t < ROUNDS; ++t)
      krow[t] = img + min(kb0 + min(t * LANES + gl_SubgroupInvocationID, KB - 1), p.hw - 1) * p.c;
#else
    uint krow[KB];
    [[unroll]] for (uint j = 0; j < KB; ++j) krow[j] = img + min(kb0 + j, p.hw - 1) * p.c;
#endif

    float s[QB][KB];
    [[unroll]] for (uint i = 0; i < QB; ++i)
      [[unroll]] for (uint j = 0; j < KB; ++j) s[i][j] = 0.0;
    for (uint ch = 0; ch < p.c; ch += CS) {
      float kv[KB][CS];
#if SHARED_KV
      float mine[ROUNDS][CS];
      [[unroll]] for (uint t = 0; t < ROUNDS; ++t) LOAD(k, krow[t] + ch, mine[t]);
      [[unroll]] for (uint j = 0; j < KB; ++j)
        [[unroll]] for (uint a = 0; a < CS; ++a) kv[j][a] = subgroupShuffle(mine[j / LANES][a], j % LANES);
#else
      [[unroll]] for (uint j = 0; j < KB; ++j) LOAD(k, krow[j] + ch, kv[j]);
#endif
      [[unroll]] for (uint i = 0; i < QB; ++i) {
        float qv[CS];
        LOAD(q, qrow[i] + ch, qv);
        [[unroll]] for (uint a = 0; a < CS; ++a)
          [[unroll]] for (uint j = 0; j < KB; ++j) s[i][j] = fma(qv[a], kv[j][a], s[i][j]);
      }
    }

    // Online softmax update; keys past the end get probability 0.
    float alpha[QB], post[QB];
    [[unroll]] for (uint i = 0; i < QB; ++i) {
      float mx = m[i];
      [[unroll]] for (uint j = 0; j < KB; ++j) {
        s[i][j] = kb0 + j < p.hw ? s[i][j] * p.scale_log2 : -1.0 / 0.0;
        mx = max(mx, s[i][j]);
      }
      alpha[i] = exp2(m[i] - mx);  // 0 on the first block (m = -inf)
      float sum = 0.0;
      [[unroll]] for (uint j = 0; j < KB; ++j) {
        s[i][j] = exp2(s[i][j] - mx);
        sum += s[i][j];
      }
      l[i] = l[i] * alpha[i] + sum;
      m[i] = mx;
      post[i] = last ? 1.0 / l[i] : 1.0;
    }

    for (uint ch = 0; ch < p.c; ch += CS) {
      float vv[KB][CS];
#if SHARED_KV
      float mine[ROUNDS][CS];
      [[unroll]] for (uint t = 0; t < ROUNDS; ++t) LOAD(v, krow[t] + ch, mine[t]);
      [[unroll]] for (uint j = 0; j < KB; ++j)
        [[unroll]] for (uint a = 0; a < CS; ++a) vv[j][a] = subgroupShuffle(mine[j / LANES][a], j % LANES);
#else
      [[unroll]] for (uint j = 0; j < KB; ++j) LOAD(v, krow[j] + ch, vv[j]);
#endif
      if (live) {
        [[unroll]] for (uint i = 0; i < QB; ++i) {
          if (i >= qcount) break;
          const uint e = qrow[i] + ch;
          // The first block never uses what `out` held: it may be anything, NaN included.
          float prev[CS];
          LOAD(o, e, prev);
          float res[CS];
          [[unroll]] for (uint a = 0; a < CS; ++a) {
            float acc = 0.0;
            [[unroll]] for (uint j = 0; j < KB; ++j) acc = fma(s[i][j], vv[j][a], acc);
            res[a] = ((first ? 0.0 : prev[a]) * alpha[i] + acc) * post[i];
          }
          STORE(o, e, res);
        }
      }
    }
  }
}
