#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// FlashAR's fused logits (engine/ops/flashar_fuse.h): one workgroup per output row. A row takes
// H logits (the backbone's head), V logits (the vertical branch's), or g H + (1 - g) V with the
// learned gate g = sigmoid(fc2 . SiLU(fc1 z) + bias) on z, the two rows normalised: per head,
// z = [n(H); n(V)] with n(x) = clamp((x - mean x) / (rms(x - mean x) + 1e-6), -6, 6); joint (the
// released code's), the 2 vocab values [H; V] centred and scaled as one, the RMS floored at 1e-3
// (sqrt of 1e-6) instead of shifted. Sums are tree reductions in shared memory whose order depends
// only on the workgroup size (no subgroup operations); each invocation walks the vocabulary with
// stride WG, so a long vocabulary stays within llvmpipe's loop limit.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint HIDDEN = 32;  // the gate's hidden width P
layout(binding = 0) readonly buffer H { float h[]; };
layout(binding = 1) readonly buffer V { float v[]; };
layout(binding = 2) readonly buffer S { uint src[]; };     // [rows, 3]: H row, V row, kind
layout(binding = 3) readonly buffer F1 { float fc1[]; };   // [HIDDEN, 2 vocab]
layout(binding = 4) readonly buffer F2 { float fc2[]; };   // [HIDDEN + 1]: fc2's weights, then its bias
layout(binding = 5) writeonly buffer O { float o[]; };     // [rows, vocab]
layout(binding = 6) writeonly buffer G { float gates[]; }; // [rows]: the weight of H used
layout(push_constant) uniform P {
  uint rows;
  uint vocab;
  uint joint;  // 1: normalise [H; V] as one vector
} p;

const uint KIND_GATED = 0, KIND_H = 1, KIND_V = 2;

shared float part[HIDDEN * gl_WorkGroupSize.x];
shared float gate;

// Sums part[k * WG + i] over i for k < n into part[k * WG], halving the group each round.
void reduce(uint n) {
  const uint lid = gl_LocalInvocationID.x;
  for (uint stride = gl_WorkGroupSize.x / 2; stride > 0; stride /= 2) {
    barrier();
    if (lid < stride)
      for (uint k = 0; k < n; ++k) part[k * gl_WorkGroupSize.x + lid] += part[k * gl_WorkGroupSize.x + lid + stride];
  }
  barrier();
}

void main() {
  const uint row = gl_WorkGroupID.x, lid = gl_LocalInvocationID.x, WG = gl_WorkGroupSize.x, n = p.vocab;
  if (row >= p.rows) return;  // uniform over the workgroup
  const uint hb = src[row * 3] * n, vb = src[row * 3 + 1] * n, kind = src[row * 3 + 2], ob = row * n;
  if (kind != KIND_GATED) {
    for (uint i = lid; i < n; i += WG) o[ob + i] = kind == KIND_H ? h[hb + i] : v[vb + i];
    if (lid == 0) gates[row] = kind == KIND_H ? 1.0 : 0.0;
    return;
  }
  float sh = 0.0, sv = 0.0;
  for (uint i = lid; i < n; i += WG) {
    sh += h[hb + i];
    sv += v[vb + i];
  }
  part[lid] = sh;
  part[WG + lid] = sv;
  reduce(2);
  const float joint_mean = (part[0] + part[WG]) / float(2 * n);
  const float mh = p.joint != 0 ? joint_mean : part[0] / float(n), mv = p.joint != 0 ? joint_mean : part[WG] / float(n);
  barrier();
  float qh = 0.0, qv = 0.0;
  for (uint i = lid; i < n; i += WG) {
    const float ch = h[hb + i] - mh, cv = v[vb + i] - mv;
    qh += ch * ch;
    qv += cv * cv;
  }
  part[lid] = qh;
  part[WG + lid] = qv;
  reduce(2);
  const float joint_rms = sqrt(max((part[0] + part[WG]) / float(2 * n), 1e-6));
  const float rh = p.joint != 0 ? joint_rms : sqrt(part[0] / float(n)) + 1e-6;
  const float rv = p.joint != 0 ? joint_rms : sqrt(part[WG] / float(n)) + 1e-6;
  barrier();
  float acc[HIDDEN];
  for (uint k = 0; k < HIDDEN; ++k) acc[k] = 0.0;
  for (uint i = lid; i < n; i += WG) {
    const float zh = clamp((h[hb + i] - mh) / rh, -6.0, 6.0), zv = clamp((v[vb + i] - mv) / rv, -6.0, 6.0);
    for (uint k = 0; k < HIDDEN; ++k) acc[k] += fc1[k * 2 * n + i] * zh + fc1[k * 2 * n + n + i] * zv;
  }
  for (uint k = 0; k < HIDDEN; ++k) part[k * WG + lid] = acc[k];
  reduce(HIDDEN);
  if (lid == 0) {
    float y = fc2[HIDDEN];
    for (uint k = 0; k < HIDDEN; ++k) {
      const float a = part[k * WG];
      y += fc2[k] * (a / (1.0 + exp(-a)));
    }
    gate = 1.0 / (1.0 + exp(-y));
    gates[row] = gate;
  }
  barrier();
  const float g = gate, rest = 1.0 - g;
  for (uint i = lid; i < n; i += WG) o[ob + i] = g * h[hb + i] + rest * v[vb + i];
}
