#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// LlamaGen's 2D RoPE on head rows: pair i = (x[2i], x[2i+1]) of each head rotates by the cos/sin
// of row * f_i for i < head_dim / 4 and of col * f_(i - head_dim / 4) above. A position whose flag
// is set (the condition tokens) has cos = sin = 0, so its vector becomes zero, as in LlamaGen.
// x and y may be the same buffer: each invocation reads its pair before writing it.
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer Pos { uint pos[]; };        // [P, 3]: row, col, flag
layout(binding = 1) readonly buffer Table { vec2 cos_sin[]; };  // [n_pos, head_dim / 4]
layout(binding = 2) readonly buffer X { float x[]; };
layout(binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint tokens, heads, head_dim;
  uint x_stride, x_offset, y_stride, y_offset;
  uint pos_rows;  // token n uses position n % pos_rows
  uint n_pos;     // table rows; larger coordinates clamp to the last
} p;

void main() {
  const uint i = linear_invocation();
  const uint pairs = p.head_dim >> 1, quarter = p.head_dim >> 2;
  if (i >= p.tokens * p.heads * pairs) return;
  const uint pair = i % pairs, th = i / pairs;
  const uint h = th % p.heads, n = th / p.heads;
  const uint pb = (n % p.pos_rows) * 3u;
  vec2 cs = vec2(0.0);
  if (pos[pb + 2u] == 0u) {
    const uint coord = pair < quarter ? pos[pb] : pos[pb + 1u];
    cs = cos_sin[min(coord, p.n_pos - 1u) * quarter + (pair < quarter ? pair : pair - quarter)];
  }
  const uint xi = p.x_offset + n * p.x_stride + h * p.head_dim + 2u * pair;
  const float x0 = x[xi], x1 = x[xi + 1u];
  const uint yi = p.y_offset + n * p.y_stride + h * p.head_dim + 2u * pair;
  y[yi] = x0 * cs.x - x1 * cs.y;
  y[yi + 1u] = x1 * cs.x + x0 * cs.y;
}
