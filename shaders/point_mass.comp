#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// Point masses on device-chosen tokens, one invocation per element (engine/ops/draft_tokens.h):
// out[j][i] = 1 where i == tokens[j] (all 0 for a token >= V).
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer Tok { uint tokens[]; };
layout(binding = 1) writeonly buffer Out { float outv[]; };
layout(push_constant) uniform P { uint rows, vocab, tok_off, out_off; } p;

void main() {
  const uint e = linear_invocation();
  if (e >= p.rows * p.vocab) return;
  const uint j = e / p.vocab, i = e - j * p.vocab;
  outv[p.out_off + e] = tokens[p.tok_off + j] == i ? 1.0 : 0.0;
}
