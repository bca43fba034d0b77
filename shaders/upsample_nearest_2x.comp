#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// Nearest-neighbour 2x upsampling of channel-last activations: each invocation reads one input
// element and writes its four copies (one read per four writes; CPU drivers pay per access).
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 1) writeonly buffer Y { float y[]; };
// rows = N * H; row_elems = W * C; workgroups along y step over rows (there may be fewer
// workgroups than rows).
layout(push_constant) uniform P { uint rows, row_elems, c; } p;

void main() {
  const uint e = gl_GlobalInvocationID.x;  // (column, channel) within the row
  if (e >= p.row_elems) return;
  const uint col = e / p.c, ch = e - col * p.c;
  const uint out_row = 2 * p.row_elems;  // elements per output row
  for (uint r = gl_WorkGroupID.y; r < p.rows; r += gl_NumWorkGroups.y) {
    const float v = x[r * p.row_elems + e];
    const uint o = 2 * r * out_row + 2 * col * p.c + ch;
    y[o] = v;
    y[o + p.c] = v;
    y[o + out_row] = v;
    y[o + out_row + p.c] = v;
  }
}
