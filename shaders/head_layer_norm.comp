#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"
// Chameleon's q/k LayerNorm (engine/ops/head_layer_norm.h): one subgroup per (token, head)
// vector, grid-strided; the mean first, then the variance of the differences (two passes over a
// vector of head_dim, as a reference would, rather than E[x^2] - E[x]^2); in place.
layout(local_size_x_id = 0) in;
layout(binding = 0) buffer X { float x[]; };
layout(binding = 1) readonly buffer W { float w[]; };
layout(binding = 2) readonly buffer B { float b[]; };
layout(push_constant) uniform P {
  uint tokens, heads, head_dim, row_stride, col_offset, heads_per_group;
  float eps;
} p;

void main() {
  const uint groups = gl_NumWorkGroups.x * gl_NumWorkGroups.y;
  const uint group = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  const uint vectors = p.tokens * p.heads;
  for (uint v = group * gl_NumSubgroups + gl_SubgroupID; v < vectors; v += groups * gl_NumSubgroups) {
    const uint token = v / p.heads, head = v % p.heads;
    const uint base = p.col_offset + token * p.row_stride + head * p.head_dim;
    const uint affine = (head / p.heads_per_group) * p.head_dim;
    float sum = 0.0;
    for (uint i = gl_SubgroupInvocationID; i < p.head_dim; i += gl_SubgroupSize) sum += x[base + i];
    const float mean = subgroupAdd(sum) / float(p.head_dim);
    float ss = 0.0;
    for (uint i = gl_SubgroupInvocationID; i < p.head_dim; i += gl_SubgroupSize) {
      const float d = x[base + i] - mean;
      ss += d * d;
    }
    const float r = inversesqrt(subgroupAdd(ss) / float(p.head_dim) + p.eps);
    for (uint i = gl_SubgroupInvocationID; i < p.head_dim; i += gl_SubgroupSize)
      x[base + i] = (x[base + i] - mean) * r * w[affine + i] + b[affine + i];
  }
}
