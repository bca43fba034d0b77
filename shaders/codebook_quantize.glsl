// Body of codebook_quantize.comp / codebook_quantize_shared.comp: the nearest L2-normalised
// codebook entry to each L2-normalised latent vector (the encoder's VectorQuantizer). For unit
// vectors min distance = max dot product, and normalising z does not change the argmax, so
// id = argmax_i dot(z, e_i) / max(|e_i|, 1e-12). Ties go to the lowest index (codes are scanned
// in order and only a strictly larger score replaces the best).
// One invocation per position, z in registers; every invocation scans the same codes. With
// SHARED_CODES defined to 1 the LANES lanes of a subgroup (LANES = gl_SubgroupSize, fixed at
// pipeline creation) load each block of codes once between them and pass it round by shuffles to
// constant lanes (CPU drivers load lane by lane); with 0 each invocation loads them.
#if SHARED_CODES
#extension GL_KHR_shader_subgroup_shuffle : require
#endif
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint E_DIM = 8;
layout(constant_id = 2) const uint CODES = 4;  // codes per block
layout(constant_id = 3) const uint LANES = 8;  // used with SHARED_CODES
layout(binding = 0) readonly buffer Z { float z[]; };
layout(binding = 1) readonly buffer E { float codebook[]; };
layout(binding = 2) writeonly buffer I { uint ids[]; };
layout(push_constant) uniform P { uint count, n_e; } p;

const uint BLOCK = CODES * E_DIM;
const uint ROUNDS = (BLOCK + LANES - 1) / LANES;

void main() {
  const uint t = linear_invocation();
  // Invocations past the end scan too (with SHARED_CODES every lane joins the broadcasts) but
  // write nothing.
  const uint pos = min(t, p.count - 1);
  float zv[E_DIM];
  [[unroll]] for (uint d = 0; d < E_DIM; ++d) zv[d] = z[pos * E_DIM + d];

  float best = -1.0 / 0.0;
  uint best_id = 0;
  for (uint c0 = 0; c0 < p.n_e; c0 += CODES) {
    float ev[CODES][E_DIM];
#if SHARED_CODES
    float mine[ROUNDS];
    [[unroll]] for (uint r = 0; r < ROUNDS; ++r) {
      const uint f = min(r * LANES + gl_SubgroupInvocationID, BLOCK - 1);
      mine[r] = codebook[min(c0 * E_DIM + f, p.n_e * E_DIM - 1)];
    }
    [[unroll]] for (uint i = 0; i < CODES; ++i)
      [[unroll]] for (uint d = 0; d < E_DIM; ++d)
        ev[i][d] = subgroupShuffle(mine[(i * E_DIM + d) / LANES], (i * E_DIM + d) % LANES);
#else
    [[unroll]] for (uint i = 0; i < CODES; ++i)
      [[unroll]] for (uint d = 0; d < E_DIM; ++d) ev[i][d] = codebook[min(c0 + i, p.n_e - 1) * E_DIM + d];
#endif
    [[unroll]] for (uint i = 0; i < CODES; ++i) {
      float dot = 0.0, ee = 0.0;
      [[unroll]] for (uint d = 0; d < E_DIM; ++d) {
        dot = fma(zv[d], ev[i][d], dot);
        ee = fma(ev[i][d], ev[i][d], ee);
      }
      const float score = dot / max(sqrt(ee), 1e-12);
      if (c0 + i < p.n_e && score > best) {
        best = score;
        best_id = c0 + i;
      }
    }
  }
  if (t < p.count) ids[t] = best_id;
}
