#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"
// y = x * inversesqrt(mean(x^2) + eps) * weight over rows of length dim. On a CPU device one
// subgroup owns a row, so the mean comes from a subgroup reduction: no shared memory and no
// barriers (lavapipe pays dearly for barriers). On a GPU a subgroup walking a row of 1280 alone
// waits on memory 40 times in a row (65 us a call on an H200), so there a workgroup owns a row and
// folds its subgroups' sums through shared memory. y may alias x: every element is read and then
// written by the same invocation.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint WEIGHT_F16 = 0;  // weight bound as packed halves
layout(constant_id = 2) const bool ROW_PER_WORKGROUP = false;
layout(constant_id = 3) const uint MAX_SUBGROUPS = 64;  // workgroup size / smallest subgroup size
layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 1) readonly buffer W { uint w[]; };
layout(binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint rows;
  uint dim;
  float eps;
} p;

float weight(uint i) { return WEIGHT_F16 != 0 ? LOAD_HALF(w, i) : uintBitsToFloat(w[i]); }

shared float subgroup_sums[MAX_SUBGROUPS];

void main() {
  const uint groups = gl_NumWorkGroups.x * gl_NumWorkGroups.y;
  const uint group = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (ROW_PER_WORKGROUP) {
    const uint lid = gl_LocalInvocationID.x, WG = gl_WorkGroupSize.x;
    for (uint row = group; row < p.rows; row += groups) {  // uniform across the workgroup
      const uint base = row * p.dim;
      float ss = 0.0;
      for (uint i = lid; i < p.dim; i += WG) {
        const float v = x[base + i];
        ss += v * v;
      }
      const float sg_sum = subgroupAdd(ss);
      if (subgroupElect()) subgroup_sums[gl_SubgroupID] = sg_sum;
      barrier();
      float total = 0.0;
      for (uint g = 0; g < gl_NumSubgroups; ++g) total += subgroup_sums[g];
      barrier();  // every invocation has read the sums before the next row writes them
      const float r = inversesqrt(total / float(p.dim) + p.eps);
      for (uint i = lid; i < p.dim; i += WG) y[base + i] = (x[base + i] * r) * weight(i);
    }
    return;
  }
  // Grid-stride over rows so the host need not know how many subgroups a workgroup holds.
  for (uint row = group * gl_NumSubgroups + gl_SubgroupID; row < p.rows; row += groups * gl_NumSubgroups) {
    const uint base = row * p.dim;
    float ss = 0.0;
    for (uint i = gl_SubgroupInvocationID; i < p.dim; i += gl_SubgroupSize) {
      const float v = x[base + i];
      ss += v * v;
    }
    const float r = inversesqrt(subgroupAdd(ss) / float(p.dim) + p.eps);
    for (uint i = gl_SubgroupInvocationID; i < p.dim; i += gl_SubgroupSize) y[base + i] = (x[base + i] * r) * weight(i);
  }
}
