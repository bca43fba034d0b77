#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// y = rope(x) on head rows (rope_2d.glsl). x and y may be the same buffer: each invocation reads
// its pair before writing it.
layout(local_size_x_id = 0) in;
#include "rope_2d.glsl"
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
  const uint pairs = p.head_dim >> 1;
  if (i >= p.tokens * p.heads * pairs) return;
  const uint pair = i % pairs, th = i / pairs;
  const uint h = th % p.heads, n = th / p.heads;
  const vec2 cs = rope_cos_sin(n % p.pos_rows, pair, p.head_dim, p.n_pos);
  const uint xi = p.x_offset + n * p.x_stride + h * p.head_dim + 2u * pair;
  const vec2 r = rope_rotate(vec2(x[xi], x[xi + 1u]), cs);
  const uint yi = p.y_offset + n * p.y_stride + h * p.head_dim + 2u * pair;
  y[yi] = r.x;
  y[yi + 1u] = r.y;
}
