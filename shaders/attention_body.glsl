// Multi-head attention over a KV cache with an online (flash) softmax; scores never leave
// registers. Included by attention_{f32,f16}{,_narrow}.comp and attention_f16_texel.comp, which
// set CACHE_F16, WIDE_LOADS and TEXEL_LOADS.
//
// Workgroup (x = query block * splits + split, y = head, z = batch) covers a block of queries
// against one chunk of cache slots. A subgroup takes QG queries at a time (QG <= subgroup size)
// and walks the slots. Lanes own pairs of head elements, so each cache element is loaded once
// per subgroup pass and reused by all QG queries (lavapipe executes every load lane by lane,
// which makes loads its dominant cost). The QG partial dot products of a slot are summed by one
// transposed butterfly (QG - 1 + log2(subgroup / QG) shuffles instead of QG reductions), which
// leaves query j's score in lanes [j * r, (j + 1) * r), r = subgroup size / QG. The softmax
// bookkeeping then runs lane-wise for all queries at once, and the accumulators take each
// query's rescale factor and weight by broadcast. Branches depend only on the slot and the
// queries, so they are uniform across the subgroup. No shared memory, no workgroup barriers.
// A slot is loaded only when some query of the group may see it, so garbage (even NaN) in
// invisible slots never reaches the output. With splits > 1 each split writes its unnormalised
// accumulator and (max, sum) to the workspace, and the last split to finish a query group merges
// them (finish_split): one dispatch, where a second pass cost a dispatch and a barrier per layer.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint HEAD_DIM = 64;  // a multiple of UNIT
layout(constant_id = 2) const uint QG = 1;         // queries per pass: 1, 2, 4, 8 or 16, <= subgroup size
layout(constant_id = 3) const uint MIN_SG = 8;     // smallest subgroup size the device may use
// The subgroup size where the device fixes it (0: read gl_SubgroupSize). As a constant, the
// butterfly's shuffle distances and the broadcasts' lanes are known to the compiler: shuffles
// instead of trips through memory on CPU drivers.
layout(constant_id = 4) const uint FIXED_SG = 0;
// Read another lane's softmax state by subgroupShuffle (CPU drivers: llvmpipe builds
// subgroupBroadcast as a loop over the lanes in search of an active one, a shuffle to a constant
// lane as one permute) or by subgroupBroadcast (GPUs: a scalar register read on AMD and Intel).
layout(constant_id = 5) const bool SHUFFLE_READS = false;
float lane_value(float x, uint l) { return SHUFFLE_READS ? subgroupShuffle(x, l) : subgroupBroadcast(x, l); }
// Whether the slots are split (p.splits > 1). A constant, so that a kernel without splits carries
// none of their code: on lavapipe its mere presence made every attention 20-60 % slower.
layout(constant_id = 6) const bool SPLIT = false;

// A lane loads its cache elements in units of UNIT elements, one load component each: 64-bit
// words where the device has int64 (lavapipe pays per load component, so wider is cheaper).
layout(binding = 0) readonly buffer Q { float q[]; };
#if defined(TEXEL_LOADS)
// f16 caches through uniform texel buffers (CPU drivers: a texel fetch is one vector gather, a
// storage-buffer load a loop over the lanes): units of 4 halves, two to a 16-byte texel; the
// loads are defined after the push constants, which say where each cache starts in its view.
#define UNIT 4u
layout(binding = 1) uniform utextureBuffer kt;
layout(binding = 2) uniform utextureBuffer vt;
#elif CACHE_F16 && WIDE_LOADS
#define UNIT 4u
layout(binding = 1) readonly buffer K { uint64_t kc[]; };
layout(binding = 2) readonly buffer V { uint64_t vc[]; };
void split_unit(uint64_t w, out vec2 a, out vec2 b) {
  const uvec2 h = unpackUint2x32(w);
  a = unpackHalf2x16(h.x);
  b = unpackHalf2x16(h.y);
}
void load_k(uint u, out vec2 a, out vec2 b) { split_unit(kc[u], a, b); }
void load_v(uint u, out vec2 a, out vec2 b) { split_unit(vc[u], a, b); }
#elif CACHE_F16
#define UNIT 2u
layout(binding = 1) readonly buffer K { uint kc[]; };
layout(binding = 2) readonly buffer V { uint vc[]; };
void load_k(uint u, out vec2 a, out vec2 b) { a = unpackHalf2x16(kc[u]); b = vec2(0.0); }
void load_v(uint u, out vec2 a, out vec2 b) { a = unpackHalf2x16(vc[u]); b = vec2(0.0); }
#elif WIDE_LOADS
#define UNIT 2u
layout(binding = 1) readonly buffer K { uint64_t kc[]; };
layout(binding = 2) readonly buffer V { uint64_t vc[]; };
void load_k(uint u, out vec2 a, out vec2 b) { a = uintBitsToFloat(unpackUint2x32(kc[u])); b = vec2(0.0); }
void load_v(uint u, out vec2 a, out vec2 b) { a = uintBitsToFloat(unpackUint2x32(vc[u])); b = vec2(0.0); }
#else
#define UNIT 2u
layout(binding = 1) readonly buffer K { vec2 kc[]; };
layout(binding = 2) readonly buffer V { vec2 vc[]; };
void load_k(uint u, out vec2 a, out vec2 b) { a = kc[u]; b = vec2(0.0); }
void load_v(uint u, out vec2 a, out vec2 b) { a = vc[u]; b = vec2(0.0); }
#endif
const uint UNITS = HEAD_DIM / UNIT;                 // units per head row
const uint PU = UNIT / 2u;                          // element pairs per unit
#if defined(TEXEL_LOADS)
// A texel holds two units. With an even number of units per row (every row then starts on a
// texel) a lane owns both units of its texels, lane l texels l, l + sg, ...: one fetch for two
// units, where lanes owning units l, l + sg, ... fetched every texel twice.
const bool PAIRED = (UNITS & 1u) == 0u;
#else
const bool PAIRED = false;
#endif
const uint UPL = PAIRED ? 2u * ((UNITS / 2u + MIN_SG - 1u) / MIN_SG)  // units per lane, worst case
                        : (UNITS + MIN_SG - 1u) / MIN_SG;
const uint PPL = UPL * PU;                          // element pairs per lane
layout(binding = 3) readonly buffer R { uvec2 ranges[]; };  // per query: (dense_end, end)
layout(binding = 4) readonly buffer M { uint bits[]; };     // per query: words of slot bits
layout(binding = 5) writeonly buffer O { float dst[]; };
// splits > 1: arrival counters in words [0, ws_base), zero between dispatches (each group's last
// split resets its own), then the partials: acc [B, H, T, splits, Dh], then (m, l) per record.
// Coherent: a split reads what other workgroups wrote.
layout(binding = 6) coherent buffer WS { uint ws[]; };
layout(push_constant) uniform P {
  uint T, H, slots, kv_len;
  uint q_stride, q_offset;
  uint meta_batch_stride, words, has_bits;
  uint qblock, chunk, splits;
  float scale;
  uint k_texel0, v_texel0;  // TEXEL_LOADS: the caches' first texels in their views
  uint ws_base;
} p;

#if defined(TEXEL_LOADS)
void split_texel_unit(uvec4 t, uint u, out vec2 a, out vec2 b) {
  const uvec2 h = (u & 1u) != 0u ? t.zw : t.xy;
  a = unpackHalf2x16(h.x);
  b = unpackHalf2x16(h.y);
}
uvec4 k_texel_of(uint u) { return texelFetch(kt, int(p.k_texel0 + (u >> 1))); }  // the texel holding unit u
uvec4 v_texel_of(uint u) { return texelFetch(vt, int(p.v_texel0 + (u >> 1))); }
void load_k(uint u, out vec2 a, out vec2 b) { split_texel_unit(k_texel_of(u), u, a, b); }
void load_v(uint u, out vec2 a, out vec2 b) { split_texel_unit(v_texel_of(u), u, a, b); }
#endif

const float NO_MAX = -3.0e38;  // finite, so exp(NO_MAX - s) is 0 and never NaN

// The unit a lane holds i-th, and the element pair held in slot i of a lane's registers.
uint unit_of(uint lane, uint i, uint sg) { return PAIRED ? 2u * (lane + (i >> 1) * sg) + (i & 1u) : lane + i * sg; }
uint pair_of(uint lane, uint i, uint sg) { return unit_of(lane, i / PU, sg) * PU + i % PU; }

// One butterfly step over 2 * half_count values: lanes with bit `o` set keep the upper half, the
// others the lower half, and each adds the partner's (lane ^ o) values of the half it keeps.
void fold(inout float v[16], uint half_count, uint o, bool upper) {
  [[unroll]] for (uint i = 0; i < half_count; ++i) {
    const float send = upper ? v[i] : v[i + half_count];
    const float keep = upper ? v[i + half_count] : v[i];
    v[i] = keep + subgroupShuffleXor(send, o);
  }
}

// Called by every split's subgroup after it wrote the partials of queries [t0, t0 + QG): the last
// of the splits to arrive merges them into dst, as out = sum_i acc_i * exp(m_i - M) / sum_i l_i *
// exp(m_i - M) over the splits i, M = max m_i; splits that saw no key (l = 0) count for nothing,
// and a query that saw no key at all gets zeros. Only this subgroup's lanes meet here, so no
// workgroup barrier: llvmpipe would compile the kernel as a coroutine for one.
void finish_split(uint b, uint h, uint t0, uint q_end, uint lane, uint sg) {
  memoryBarrierBuffer();  // every lane's partials, before lane 0 counts them
  subgroupBarrier();
  const uint counter = (b * p.H + h) * ((p.T + QG - 1u) / QG) + t0 / QG;
  uint arrived = 0u;
  if (lane == 0u) arrived = atomicAdd(ws[counter], 1u);
  if (subgroupBroadcast(arrived, 0u) != p.splits - 1u) return;
  memoryBarrierBuffer();  // the other splits' partials, after their count was seen
  if (lane == 0u) ws[counter] = 0u;
  const uint S = p.splits, acc0 = p.ws_base;
  const uint ml0 = acc0 + gl_NumWorkGroups.z * p.H * p.T * S * HEAD_DIM;
  for (uint t = t0; t < min(t0 + QG, q_end); ++t) {
    const uint rec = ((b * p.H + h) * p.T + t) * S;  // (b, h, t, split 0)
    float mx = NO_MAX;
    for (uint i = 0; i < S; ++i)
      if (uintBitsToFloat(ws[ml0 + (rec + i) * 2u + 1u]) > 0.0) mx = max(mx, uintBitsToFloat(ws[ml0 + (rec + i) * 2u]));
    const uint ob = ((b * p.T + t) * p.H + h) * HEAD_DIM;
    for (uint d = lane; d < HEAD_DIM; d += sg) {
      float num = 0.0, den = 0.0;
      for (uint i = 0; i < S; ++i) {
        const float l = uintBitsToFloat(ws[ml0 + (rec + i) * 2u + 1u]);
        if (l > 0.0) {
          const float w = exp(uintBitsToFloat(ws[ml0 + (rec + i) * 2u]) - mx);
          den += l * w;
          num += uintBitsToFloat(ws[acc0 + (rec + i) * HEAD_DIM + d]) * w;
        }
      }
      dst[ob + d] = den > 0.0 ? num / den : 0.0;
    }
  }
}

void main() {
  const uint split = gl_WorkGroupID.x % p.splits, qb = gl_WorkGroupID.x / p.splits;
  const uint h = gl_WorkGroupID.y, b = gl_WorkGroupID.z;
  const uint q_end = min(p.T, (qb + 1u) * p.qblock);
  const uint s_lo = split * p.chunk, s_hi = min(p.kv_len, s_lo + p.chunk);
  const uint lane = gl_SubgroupInvocationID, sg = FIXED_SG != 0u ? FIXED_SG : gl_SubgroupSize;
  const uint r = sg / QG;         // lanes per query after the butterfly
  const uint my_q = lane / r;     // the query whose score this lane ends up with

  for (uint t0 = qb * p.qblock + gl_SubgroupID * QG; t0 < q_end; t0 += gl_NumSubgroups * QG) {
    vec2 qv[QG * PPL], acc[QG * PPL];
    uint dense[QG], lim[QG], meta[QG];
    uint common_dense = 0xffffffffu, any_end = 0u;
    [[unroll]] for (uint j = 0; j < QG; ++j) {
      const uint t = t0 + j;
      meta[j] = b * p.meta_batch_stride + t;
      const uvec2 rg = t < q_end ? ranges[meta[j]] : uvec2(0u);
      lim[j] = min(rg.y, s_hi);
      dense[j] = min(rg.x, lim[j]);
      common_dense = min(common_dense, dense[j]);
      any_end = max(any_end, lim[j]);
      const uint qbase = p.q_offset + (b * p.T + min(t, q_end - 1u)) * p.q_stride + h * HEAD_DIM;
      [[unroll]] for (uint i = 0; i < PPL; ++i) {
        const uint d2 = pair_of(lane, i, sg);
        qv[j * PPL + i] = d2 < HEAD_DIM / 2u ? vec2(q[qbase + 2u * d2], q[qbase + 2u * d2 + 1u]) : vec2(0.0);
        acc[j * PPL + i] = vec2(0.0);
      }
    }
    float m = NO_MAX, l = 0.0;  // softmax state of query my_q
    const uint all_mask = (1u << QG) - 1u;
    uint word[QG], word_at = 0xffffffffu;  // the queries' mask words for slots word_at * 32 + [0, 32)
    for (uint s = s_lo; s < any_end; ++s) {
      uint vis = all_mask;
      if (s >= common_dense) {
        if (p.has_bits != 0u && (s >> 5) != word_at) {
          word_at = s >> 5;
          [[unroll]] for (uint j = 0; j < QG; ++j) word[j] = s < lim[j] ? bits[meta[j] * p.words + word_at] : 0u;
        }
        vis = 0u;
        [[unroll]] for (uint j = 0; j < QG; ++j) {
          const bool dense_part = s < dense[j];
          const bool bit = s < lim[j] && p.has_bits != 0u && ((word[j] >> (s & 31u)) & 1u) != 0u;
          if (dense_part || bit) vis |= 1u << j;
        }
      }
      if (vis == 0u) continue;
      const uint base = ((b * p.slots + s) * p.H + h) * UNITS;
      vec2 kv[PPL], vv[PPL];
#if defined(TEXEL_LOADS)
      uvec4 k_texel = uvec4(0u), v_texel = uvec4(0u);
#endif
      [[unroll]] for (uint i = 0; i < UPL; ++i) {
        const uint u = unit_of(lane, i, sg);
        vec2 ka = vec2(0.0), kb = vec2(0.0), va = vec2(0.0), vb = vec2(0.0);
#if defined(TEXEL_LOADS)
        if (PAIRED) {
          if ((i & 1u) == 0u) {  // the texel of units u and u + 1 (both < UNITS or neither)
            k_texel = u < UNITS ? k_texel_of(base + u) : uvec4(0u);
            v_texel = u < UNITS ? v_texel_of(base + u) : uvec4(0u);
          }
          split_texel_unit(k_texel, base + u, ka, kb);
          split_texel_unit(v_texel, base + u, va, vb);
        } else
#endif
        if (u < UNITS) {
          load_k(base + u, ka, kb);
          load_v(base + u, va, vb);
        }
        kv[i * PU] = ka;
        vv[i * PU] = va;
        if (PU == 2u) {
          kv[i * PU + PU - 1u] = kb;
          vv[i * PU + PU - 1u] = vb;
        }
      }
      float part[16];
      [[unroll]] for (uint j = 0; j < 16u; ++j) part[j] = 0.0;
      [[unroll]] for (uint j = 0; j < QG; ++j)
        [[unroll]] for (uint i = 0; i < PPL; ++i) part[j] += dot(qv[j * PPL + i], kv[i]);
      uint o = sg >> 1;
      if (QG >= 16u) { fold(part, 8u, o, (lane & o) != 0u); o >>= 1; }
      if (QG >= 8u) { fold(part, 4u, o, (lane & o) != 0u); o >>= 1; }
      if (QG >= 4u) { fold(part, 2u, o, (lane & o) != 0u); o >>= 1; }
      if (QG >= 2u) { fold(part, 1u, o, (lane & o) != 0u); o >>= 1; }
      [[unroll]] for (uint step = 0; step < 7u; ++step) {  // subgroups of up to 128 lanes
        if (o == 0u) break;
        part[0] += subgroupShuffleXor(part[0], o);
        o >>= 1;
      }

      const bool seen = ((vis >> my_q) & 1u) != 0u;
      const float score = part[0] * p.scale;
      const float mn = seen ? max(m, score) : m;
      const float c = exp(m - mn);  // 1 when the max stays
      const float e = seen ? exp(score - mn) : 0.0;
      l = l * c + e;
      m = mn;
      [[unroll]] for (uint j = 0; j < QG; ++j) {
        if ((vis & (1u << j)) == 0u) continue;
        const float cj = lane_value(c, j * r), ej = lane_value(e, j * r);
        [[unroll]] for (uint i = 0; i < PPL; ++i) acc[j * PPL + i] = acc[j * PPL + i] * cj + ej * vv[i];
      }
    }
    [[unroll]] for (uint j = 0; j < QG; ++j) {
      const uint t = t0 + j;
      const float lj = lane_value(l, j * r), mj = lane_value(m, j * r);
      if (t >= q_end) continue;
      if (!SPLIT) {
        const float inv = lj > 0.0 ? 1.0 / lj : 0.0;
        const uint ob = ((b * p.T + t) * p.H + h) * HEAD_DIM;
        [[unroll]] for (uint i = 0; i < PPL; ++i) {
          const uint d2 = pair_of(lane, i, sg);
          if (d2 < HEAD_DIM / 2u) {
            dst[ob + 2u * d2] = acc[j * PPL + i].x * inv;
            dst[ob + 2u * d2 + 1u] = acc[j * PPL + i].y * inv;
          }
        }
      } else {
        const uint rec = ((b * p.H + h) * p.T + t) * p.splits + split;  // (b, h, t, split)
        const uint acc0 = p.ws_base + rec * HEAD_DIM;
        [[unroll]] for (uint i = 0; i < PPL; ++i) {
          const uint d2 = pair_of(lane, i, sg);
          if (d2 < HEAD_DIM / 2u) {
            ws[acc0 + 2u * d2] = floatBitsToUint(acc[j * PPL + i].x);
            ws[acc0 + 2u * d2 + 1u] = floatBitsToUint(acc[j * PPL + i].y);
          }
        }
        if (lane == 0u) {
          const uint ml = p.ws_base + gl_NumWorkGroups.z * p.H * p.T * p.splits * HEAD_DIM + rec * 2u;
          ws[ml] = floatBitsToUint(mj);
          ws[ml + 1u] = floatBitsToUint(lj);
        }
      }
    }
    if (SPLIT) finish_split(b, h, t0, q_end, lane, sg);
  }
}
