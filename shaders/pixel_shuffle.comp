#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// Pixel shuffle of channel-last activations (PyTorch's F.pixel_shuffle in NHWC):
// y[n, r i + a, r j + b, c] = x[n, i, j, c r^2 + a r + b]. Each invocation reads one input
// element and writes it once.
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 1) writeonly buffer Y { float y[]; };
// rows = N * H (input rows); row_elems = W * C r^2; c = output channels C; r = factor.
// Workgroups along y step over rows (there may be fewer workgroups than rows).
layout(push_constant) uniform P { uint rows, row_elems, c, r; } p;

void main() {
  const uint e = gl_GlobalInvocationID.x;  // (column, input channel) within the row
  if (e >= p.row_elems) return;
  const uint rr = p.r * p.r, cin = p.c * rr;
  const uint col = e / cin, k = e - col * cin;
  const uint ch = k / rr, ab = k - ch * rr, a = ab / p.r, b = ab - a * p.r;
  const uint out_row = p.row_elems / p.r;  // W r * C elements per output row
  for (uint r = gl_WorkGroupID.y; r < p.rows; r += gl_NumWorkGroups.y)
    y[(r * p.r + a) * out_row + (col * p.r + b) * p.c + ch] = x[r * p.row_elems + e];
}
