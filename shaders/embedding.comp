#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// out[n, d] = table[clamp(ids[n % id_count]), d] as f32 (out may repeat the ids: the rows of a CFG
// pair read the same tokens). The table may be bound in row chunks (tables beyond
// maxStorageBufferRange); one dispatch per chunk writes the tokens whose row falls inside it.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint TABLE_F16 = 0;   // table bound as packed halves
layout(constant_id = 2) const uint IDS_SIGNED = 0;  // ids are i32 (negative ids clamp to 0)
layout(binding = 0) readonly buffer Ids { uint ids[]; };
layout(binding = 1) readonly buffer Table { uint table[]; };
layout(binding = 2) writeonly buffer Out { float outv[]; };
layout(push_constant) uniform P {
  uint tokens, dim, vocab;
  uint chunk_first, chunk_rows;  // rows of the table this binding holds
  uint id_count;
} p;

void main() {
  const uint i = linear_invocation();
  if (i >= p.tokens * p.dim) return;
  const uint n = i / p.dim, d = i - n * p.dim;
  const uint raw = ids[n % p.id_count];
  const uint row = IDS_SIGNED != 0 ? uint(clamp(int(raw), 0, int(p.vocab) - 1)) : min(raw, p.vocab - 1);
  if (row < p.chunk_first || row - p.chunk_first >= p.chunk_rows) return;
  const uint e = (row - p.chunk_first) * p.dim + d;
  outv[i] = TABLE_F16 != 0 ? LOAD_HALF(table, e) : uintBitsToFloat(table[e]);
}
