// LlamaGen's 2D RoPE, shared by rope_2d.comp and rope_kv_write.comp: pair i = (x[2i], x[2i+1])
// of each head rotates by the cos/sin of row * f_i for i < head_dim / 4 and of col *
// f_(i - head_dim / 4) above. A position whose flag is set (the condition tokens) has cos = sin
// = 0, so its vector becomes zero, as in LlamaGen. The includer may place the two bindings
// (ROPE_POS_BINDING, ROPE_TABLE_BINDING; 0 and 1 by default).
#ifndef ROPE_POS_BINDING
#define ROPE_POS_BINDING 0
#define ROPE_TABLE_BINDING 1
#endif
layout(binding = ROPE_POS_BINDING) readonly buffer Pos { uint pos[]; };        // [P, 3]: row, col, flag
layout(binding = ROPE_TABLE_BINDING) readonly buffer Table { vec2 cos_sin[]; };  // [n_pos, head_dim / 4]

// (cos, sin) for pair `pair` of a head at positions row `pos_row`; coordinates past the table's
// n_pos rows clamp to its last.
// The same from a position already loaded: its row, col and flag (pos[3 p .. 3 p + 2]).
vec2 rope_cos_sin_at(uvec3 at, uint pair, uint head_dim, uint n_pos) {
  const uint quarter = head_dim >> 2;
  vec2 cs = vec2(0.0);
  if (at.z == 0u) {
    const uint coord = pair < quarter ? at.x : at.y;
    cs = cos_sin[min(coord, n_pos - 1u) * quarter + (pair < quarter ? pair : pair - quarter)];
  }
  return cs;
}
vec2 rope_cos_sin(uint pos_row, uint pair, uint head_dim, uint n_pos) {
  const uint pb = pos_row * 3u;
  return rope_cos_sin_at(uvec3(pos[pb], pos[pb + 1u], pos[pb + 2u]), pair, head_dim, n_pos);
}

vec2 rope_rotate(vec2 x, vec2 cs) { return vec2(x.x * cs.x - x.y * cs.y, x.y * cs.x + x.x * cs.y); }
