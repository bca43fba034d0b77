#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "det_math.glsl"
#include "philox.glsl"
// Sampler over many rows, one workgroup per row; engine/ops/sampler.h states the semantics and
// engine/ref/sampler_ref.cpp computes the same on the CPU. Invocation t owns chunks t, t + wg, ...
// of the row; the row's slice of `probs` is its scratch (z, then weights e, then p), and an
// invocation only reads back elements of its own chunks, so no buffer barriers are needed.
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer Cond { float cond[]; };
layout(binding = 1) readonly buffer Uncond { float uncond[]; };
layout(binding = 2) readonly buffer Pos { uint positions[]; };
layout(binding = 3) buffer Probs { float probs[]; };
layout(binding = 4) writeonly buffer Tokens { uint tokens[]; };
layout(binding = 5) readonly buffer Purposes { uint purposes[]; };
layout(binding = 6) readonly buffer Seeds { uint seeds[]; };  // lo, hi per row, with per_row_seed
layout(push_constant) uniform P {
  uint rows, vocab;
  uint cond_off, uncond_off, row_stride;  // logits of row r start at *_off + r * row_stride * vocab
  uint pos_off, probs_off, tok_off;
  uint cfg;
  uint top_k;    // 0: off
  uint top_p24;  // top_p in 2^-24 units; 2^24: off
  float inv_temp, cfg_scale;
  uint mode;  // 0 none, 1 categorical, 2 Gumbel-max, 3 argmax
  uint seed_lo, seed_hi, purpose;
  uint per_row_purpose, purpose_off;  // 1: row r draws with purposes[purpose_off + r], not purpose
  uint entropy;  // 1: step E's entropy-aware temperature (then inv_temp is 1)
  float temp, ent_a, ent_nb, ent_c;  // T0, a, -(1 / b), c
  uint per_row_seed, seed_off;  // 1: row r draws with seeds[seed_off + 2r, + 1] (images of a batch)
} p;

uint row, tid, wg, csize, nch, leaves, base;
float row_inv_temp;  // z = l * row_inv_temp: p.inv_temp, or step E's per-row reciprocal temperature
uint row_purpose() { return p.per_row_purpose != 0u ? purposes[p.purpose_off + row] : p.purpose; }
// A chunk's elements are loaded BATCH at a time into registers before any is stored: a loop
// that loads after each store waits out a memory latency per element (stores to `probs` may
// alias the logits as far as the compiler knows): 64 of them per pass for a row of 16384, the
// suspected cause of 0.12 ms per sampler call on an H100 (not measured since). The arithmetic and
// its order are unchanged (selftest: bit-equal to the reference).
const uint BATCH = 8u;
#include "chunk_tree.glsl"

shared uint sh_hist[256];
shared uint sh_group[16];
shared uint sh_cnt[kMaxChunks];  // per-chunk tie counts, then their exclusive prefix sums
shared uint sh_max_key, sh_argmax, sh_best_key, sh_best_idx, sh_sel, sh_rem, sh_bin, sh_chunk;
shared float sh_target;

float logit_l(uint i) {
  const uint r = row * p.row_stride * p.vocab + i;
  precise float l = cond[p.cond_off + r];
  if (p.cfg != 0u) {
    const float u = uncond[p.uncond_off + r];
    precise float d = l - u;
    d = d * p.cfg_scale;
    l = u + d;
  }
  return l;
}

float logit_z(uint i) {
  precise float z = logit_l(i) * row_inv_temp;
  return z;
}

uint chunk_end(uint c) { return min(c * csize + csize, p.vocab); }

// Fixed-point probability of weight e: trunc(e * inv * 2^31).
uint fixed_prob(float e, float inv) {
  precise float q = e * inv;
  q = q * 2147483648.0;
  return uint(q);
}

// (a * b) >> 24 for a < 2^24, exactly.
uint mul_shift24(uint a, uint b) {
  uint hi, lo;
  umulExtended(a, b, hi, lo);
  return (hi << 8u) | (lo >> 24u);
}

// Radix select, most significant key byte first, over the row's scratch values v (z for top-k
// with unit weights; e for top-p with fixed-point weights): the largest key tau such that the
// weight of the elements with key >= tau reaches `want`. Returns tau, the part of `want` left for
// the elements equal to tau, and their total weight. For top-p, want is derived from the total
// weight (first pass): floor(top_p24 * total / 2^24) + 1.
void radix_select(bool weighted, float inv, uint want, out uint tau, out uint rem, out uint tie_weight) {
  uint prefix = 0u, mask = 0u;
  for (uint pass = 0u; pass < 4u; ++pass) {
    const uint shift = 24u - 8u * pass;
    for (uint j = tid; j < 256u; j += wg) sh_hist[j] = 0u;
    barrier();
    for (uint c = tid; c < nch; c += wg) {
      for (uint i = c * csize; i < chunk_end(c); ++i) {
        const float v = probs[base + i];
        const uint k = order_key(v);
        if ((k & mask) == prefix) {
          const uint w = weighted ? fixed_prob(v, inv) : 1u;
          if (w != 0u) atomicAdd(sh_hist[(k >> shift) & 255u], w);
        }
      }
    }
    barrier();
    for (uint g = tid; g < 16u; g += wg) {
      uint s = 0u;
      for (uint j = 0u; j < 16u; ++j) s += sh_hist[16u * g + j];
      sh_group[g] = s;
    }
    barrier();
    if (tid == 0u) {
      if (pass == 0u && weighted) {
        uint total = 0u;
        for (uint g = 0u; g < 16u; ++g) total += sh_group[g];
        want = mul_shift24(p.top_p24, total) + 1u;
      }
      uint g = 15u;
      while (g > 0u && sh_group[g] < want) {
        want -= sh_group[g];
        --g;
      }
      uint b = 16u * g + 15u;
      while (b > 16u * g && sh_hist[b] < want) {
        want -= sh_hist[b];
        --b;
      }
      sh_sel = b;
      sh_rem = want;
      sh_bin = sh_hist[b];
    }
    barrier();
    prefix |= sh_sel << shift;
    mask |= 0xFFu << shift;
    want = sh_rem;
  }
  tau = prefix;
  rem = want;
  tie_weight = sh_bin;
}

// sh_cnt[c] = number of elements with order_key == key in chunks before c.
void tie_prefix(uint key) {
  for (uint c = tid; c < nch; c += wg) {
    uint n = 0u;
    for (uint i = c * csize; i < chunk_end(c); ++i) n += order_key(probs[base + i]) == key ? 1u : 0u;
    sh_cnt[c] = n;
  }
  barrier();
  if (tid == 0u) {
    uint s = 0u;
    for (uint c = 0u; c < nch; ++c) {
      const uint n = sh_cnt[c];
      sh_cnt[c] = s;
      s += n;
    }
  }
  barrier();
}

// Step E: the entropy in nats of the filtered p = e / S (weights e in probs, z = l):
// H = ln S + sum e_i (m - z_i) / S, the sum in the chunk-tree order.
float filtered_entropy(float m, float total, float inv) {
  barrier();  // every invocation has read the previous tree's total before its leaves change
  for (uint c = tid; c < leaves; c += wg) {
    precise float s = 0.0;
    if (c < nch) {
      for (uint i = c * csize; i < chunk_end(c); ++i) {
        precise float d = m - logit_z(i);
        d = probs[base + i] * d;
        s = s + d;
      }
    }
    ct_node[leaves + c] = s;
  }
  ct_combine(leaves);
  precise float h = ct_node[1] * inv;
  h = log_det(total) + h;
  return h;
}

// Step E: 1 / (T0 * (a exp(-H / b) + c)).
float entropy_inv_temp(float h) {
  precise float x = h * p.ent_nb;
  precise float k = p.ent_a * exp_det(x);
  k = k + p.ent_c;
  precise float t = p.temp * k;
  return recip_det(max(t, 1e-5));
}

// Step E: the kept elements' weights at the row's temperature, and their tree. Kept: with top-p
// the elements with e > 0 (it zeroes what it drops and keeps only positive weights); with top-k
// alone its cut on z = l (tau, keep, rank and sh_cnt as top-k left them); else all.
void tempered_weights(float m, uint tau, uint keep, bool rank) {
  barrier();
  precise float mt = m * row_inv_temp;
  const bool by_p = p.top_p24 < 16777216u, by_k = !by_p && p.top_k != 0u;
  for (uint c = tid; c < leaves; c += wg) {
    precise float s = 0.0;
    if (c < nch) {
      uint r = rank ? sh_cnt[c] : 0u;
      for (uint i = c * csize; i < chunk_end(c); ++i) {
        const float l = logit_l(i);
        bool kept = true;
        if (by_p) {
          kept = probs[base + i] > 0.0;
        } else if (by_k) {
          const uint k = order_key(l);
          kept = k > tau || (k == tau && r < keep);
          if (k == tau) ++r;
        }
        precise float x = l * row_inv_temp;
        x = x - mt;
        const float e = kept ? exp_det(x) : 0.0;
        probs[base + i] = e;
        s = s + e;
      }
    }
    ct_node[leaves + c] = s;
  }
  ct_combine(leaves);
}

void main() {
  row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (row >= p.rows) return;
  tid = gl_LocalInvocationID.x;
  wg = gl_WorkGroupSize.x;
  csize = chunk_size(p.vocab);
  nch = chunk_count(p.vocab);
  leaves = tree_leaves(p.vocab);
  base = p.probs_off + row * p.vocab;
  const uvec2 seed = p.per_row_seed != 0u ? uvec2(seeds[p.seed_off + 2u * row], seeds[p.seed_off + 2u * row + 1u])
                                          : uvec2(p.seed_lo, p.seed_hi);
  row_inv_temp = p.inv_temp;

  // z and its maximum.
  if (tid == 0u) {
    sh_max_key = 0u;
    sh_argmax = 0xFFFFFFFFu;
    sh_best_key = 0u;
    sh_best_idx = 0xFFFFFFFFu;
  }
  barrier();
  uint kmax = 0u;
  for (uint c = tid; c < nch; c += wg) {
    const uint end = chunk_end(c);
    for (uint i0 = c * csize; i0 < end; i0 += BATCH) {
      float zb[BATCH];
      [[unroll]] for (uint j = 0u; j < BATCH; ++j) zb[j] = i0 + j < end ? logit_z(i0 + j) : 0.0;
      [[unroll]] for (uint j = 0u; j < BATCH; ++j) {
        if (i0 + j < end) {
          probs[base + i0 + j] = zb[j];
          kmax = max(kmax, order_key(zb[j]));
        }
      }
    }
  }
  atomicMax(sh_max_key, kmax);
  barrier();
  const uint max_key = sh_max_key;
  const float m = key_float(max_key);
  if (p.mode == 3u) {
    uint first = 0xFFFFFFFFu;
    for (uint c = tid; c < nch && first == 0xFFFFFFFFu; c += wg) {
      for (uint i = c * csize; i < chunk_end(c); ++i) {
        if (order_key(probs[base + i]) == max_key) {
          first = i;
          break;
        }
      }
    }
    atomicMin(sh_argmax, first);
  }

  // Top-k on z (unit weights), then the weights e = exp(z - m) of the kept elements.
  const bool top_k = p.top_k != 0u;
  uint tau = 0u, keep = 0u;
  bool rank = false;
  if (top_k) {
    uint rem, ties;
    radix_select(false, 0.0, p.top_k, tau, rem, ties);
    keep = rem;
    rank = keep < ties;
    if (rank) tie_prefix(tau);
  }
  for (uint c = tid; c < leaves; c += wg) {
    precise float s = 0.0;
    if (c < nch) {
      uint r = rank ? sh_cnt[c] : 0u;
      const uint end = chunk_end(c);
      for (uint i0 = c * csize; i0 < end; i0 += BATCH) {
        float zb[BATCH];
        [[unroll]] for (uint j = 0u; j < BATCH; ++j) zb[j] = i0 + j < end ? probs[base + i0 + j] : 0.0;
        [[unroll]] for (uint j = 0u; j < BATCH; ++j) {
          if (i0 + j >= end) break;
          const float z = zb[j];
          bool kept = true;
          if (top_k) {
            const uint k = order_key(z);
            kept = k > tau || (k == tau && r < keep);
            if (k == tau) ++r;
          }
          precise float x = z - m;
          const float e = kept ? exp_det(x) : 0.0;
          probs[base + i0 + j] = e;
          s = s + e;
        }
      }
    }
    ct_node[leaves + c] = s;
  }
  ct_combine(leaves);
  float total = ct_node[1];
  float inv = recip_det(total);

  // Top-p on the fixed-point probabilities, ranked by e.
  if (p.top_p24 < 16777216u) {
    uint rem, tie_weight;
    radix_select(true, inv, 0u, tau, rem, tie_weight);
    const uint w = fixed_prob(key_float(tau), inv);
    keep = (rem + w - 1u) / w;
    rank = keep < tie_weight / w;
    if (rank) tie_prefix(tau);
    for (uint c = tid; c < leaves; c += wg) {
      precise float s = 0.0;
      if (c < nch) {
        uint r = rank ? sh_cnt[c] : 0u;
        for (uint i = c * csize; i < chunk_end(c); ++i) {
          const float e = probs[base + i];
          const uint k = order_key(e);
          if (k > tau || (k == tau && r < keep)) {
            s = s + e;
          } else if (e != 0.0) {
            probs[base + i] = 0.0;
          }
          if (k == tau) ++r;
        }
      }
      ct_node[leaves + c] = s;
    }
    ct_combine(leaves);
    total = ct_node[1];
    inv = recip_det(total);
  }

  if (p.entropy != 0u) {
    row_inv_temp = entropy_inv_temp(filtered_entropy(m, total, inv));
    tempered_weights(m, tau, keep, rank);
    total = ct_node[1];
    inv = recip_det(total);
  }

  if (p.mode == 1u) {
    // Inverse CDF: heap walk by invocation 0, then the chunk's owner walks its elements.
    if (tid == 0u) {
      const uint pos = positions[p.pos_off + row];
      precise float t = philox_uniform(seed, pos, row_purpose(), 0u) * total;
      sh_chunk = ct_descend(leaves, t);
      sh_target = t;
    }
    barrier();
    const uint c = sh_chunk;
    if (c % wg == tid) {
      float t = sh_target;
      uint last = c * csize, pick = 0xFFFFFFFFu;
      for (uint i = c * csize; i < chunk_end(c); ++i) {
        const float w = probs[base + i];
        if (w > 0.0) {
          last = i;
          if (t < w) {
            pick = i;
            break;
          }
          precise float r = t - w;
          t = r;
        }
      }
      tokens[p.tok_off + row] = pick != 0xFFFFFFFFu ? pick : last;
    }
  } else if (p.mode == 2u) {
    // Gumbel-max over the kept elements: argmax z_i + g_i, ties to the lowest index.
    const uint pos = positions[p.pos_off + row], purpose = row_purpose();
    uint best_key = 0u, best = 0xFFFFFFFFu;
    for (uint c = tid; c < nch; c += wg) {
      uvec4 blk = uvec4(0u);
      for (uint i = c * csize; i < chunk_end(c); ++i) {
        if ((i & 3u) == 0u) blk = philox_block(seed, pos, purpose, i);
        if (probs[base + i] > 0.0) {
          precise float v = logit_z(i) + philox_to_gumbel(blk[i & 3u]);
          const uint k = order_key(v);
          if (best == 0xFFFFFFFFu || k > best_key) {
            best_key = k;
            best = i;
          }
        }
      }
    }
    atomicMax(sh_best_key, best_key);
    barrier();
    if (best != 0xFFFFFFFFu && best_key == sh_best_key) atomicMin(sh_best_idx, best);
    barrier();
    if (tid == 0u) tokens[p.tok_off + row] = sh_best_idx;
  } else if (p.mode == 3u) {
    if (tid == 0u) tokens[p.tok_off + row] = sh_argmax;
  }

  for (uint c = tid; c < nch; c += wg) {
    const uint end = chunk_end(c);
    for (uint i0 = c * csize; i0 < end; i0 += BATCH) {
      float eb[BATCH];
      [[unroll]] for (uint j = 0u; j < BATCH; ++j) eb[j] = i0 + j < end ? probs[base + i0 + j] : 0.0;
      [[unroll]] for (uint j = 0u; j < BATCH; ++j) {
        if (i0 + j < end) {
          precise float q = eb[j] * inv;
          probs[base + i0 + j] = q;
        }
      }
    }
  }
}
