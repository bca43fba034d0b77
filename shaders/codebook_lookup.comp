#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// Token ids -> L2-normalised codebook rows (LlamaGen normalises the codebook at lookup):
// out[t] = e[id] / max(|e[id]|, 1e-12), as F.normalize. An id outside [0, n_e) gives a row of
// NaN, so a bad token cannot pass for a plausible image.
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer I { uint ids[]; };
layout(binding = 1) readonly buffer E { float codebook[]; };
layout(binding = 2) writeonly buffer O { float o[]; };
layout(push_constant) uniform P { uint count, n_e, e_dim; } p;

void main() {
  const uint t = linear_invocation();
  if (t >= p.count) return;
  const uint id = ids[t];
  const uint src = min(id, p.n_e - 1) * p.e_dim, dst = t * p.e_dim;
  float ss = 0.0;
  for (uint d = 0; d < p.e_dim; ++d) {
    const float v = codebook[src + d];
    ss = fma(v, v, ss);
  }
  const float inv = id < p.n_e ? 1.0 / max(sqrt(ss), 1e-12) : uintBitsToFloat(0x7fc00000u);
  for (uint d = 0; d < p.e_dim; ++d) o[dst + d] = codebook[src + d] * inv;
}
