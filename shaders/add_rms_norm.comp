#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"
// A residual connection and the RMSNorm after it in one dispatch (two dispatches per transformer
// layer fewer): x = x + d, then y = x * inversesqrt(mean(x^2) + eps) * weight over rows of length
// dim, with exactly the arithmetic of add.comp followed by rms_norm.comp. A subgroup or a whole
// workgroup owns a row as in rms_norm.comp; every element of x, d and y is read and written by the
// same invocation, so y may alias d.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint WEIGHT_F16 = 0;  // weight bound as packed halves
layout(constant_id = 2) const bool ROW_PER_WORKGROUP = false;
layout(constant_id = 3) const uint MAX_SUBGROUPS = 64;  // workgroup size / smallest subgroup size
layout(binding = 0) buffer X { float x[]; };         // read, then written
layout(binding = 1) readonly buffer D { float d[]; };
layout(binding = 2) readonly buffer W { uint w[]; };
layout(binding = 3) writeonly buffer Y { float y[]; };
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
        const float v = x[base + i] + d[base + i];
        x[base + i] = v;
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
  for (uint row = group * gl_NumSubgroups + gl_SubgroupID; row < p.rows; row += groups * gl_NumSubgroups) {
    const uint base = row * p.dim;
    float ss = 0.0;
    for (uint i = gl_SubgroupInvocationID; i < p.dim; i += gl_SubgroupSize) {
      const float v = x[base + i] + d[base + i];
      x[base + i] = v;
      ss += v * v;
    }
    const float r = inversesqrt(subgroupAdd(ss) / float(p.dim) + p.eps);
    for (uint i = gl_SubgroupInvocationID; i < p.dim; i += gl_SubgroupSize) y[base + i] = (x[base + i] * r) * weight(i);
  }
}
