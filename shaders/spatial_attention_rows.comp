#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"
// Spatial attention for GPUs (the VQ AttnBlock's core, as spatial_attention.glsl): one workgroup
// per query. The other kernels give each invocation whole queries and walk every key serially,
// which is a few hundred invocations for a 16x16 or 32x32 image: an H100 took 4-14 ms per call.
// Here the workgroup's lanes split the keys (scores into shared memory), then the channels (each
// lane sums its channels over every key's probability), so a call is hw workgroups of short loops.
// Two passes over the scores (max, then exp2 and sum), f32 throughout.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint MAX_HW = 256;        // scores held, >= hw
layout(constant_id = 2) const uint MAX_SUBGROUPS = 64;  // workgroup size / smallest subgroup size

layout(binding = 0) readonly buffer Q { float q[]; };
layout(binding = 1) readonly buffer K { float k[]; };
layout(binding = 2) readonly buffer V { float v[]; };
layout(binding = 3) writeonly buffer O { float o[]; };
layout(push_constant) uniform P {
  uint hw, c;
  uint query_blocks;  // = hw here (one query per workgroup)
  float scale_log2;   // scale * log2(e): scores in base 2
} p;

shared float score[MAX_HW];
shared float partial[MAX_SUBGROUPS];

// Both reductions fold the subgroups' results in index order, so every invocation gets the same
// value and the order does not depend on scheduling.
float workgroup_max(float x) {
  x = subgroupMax(x);
  if (subgroupElect()) partial[gl_SubgroupID] = x;
  barrier();
  float m = partial[0];
  for (uint g = 1u; g < gl_NumSubgroups; ++g) m = max(m, partial[g]);
  barrier();  // partial is reused
  return m;
}

float workgroup_sum(float x) {
  x = subgroupAdd(x);
  if (subgroupElect()) partial[gl_SubgroupID] = x;
  barrier();
  float s = 0.0;
  for (uint g = 0u; g < gl_NumSubgroups; ++g) s += partial[g];
  barrier();
  return s;
}

void main() {
  const uint query = gl_WorkGroupID.x, n = gl_WorkGroupID.y;
  const uint lid = gl_LocalInvocationID.x, WG = gl_WorkGroupSize.x;
  const uint img = n * p.hw * p.c, qrow = img + query * p.c;

  float local_max = -1.0 / 0.0;
  for (uint j = lid; j < p.hw; j += WG) {
    const uint krow = img + j * p.c;
    float s = 0.0;
    for (uint ch = 0u; ch < p.c; ++ch) s += q[qrow + ch] * k[krow + ch];
    s *= p.scale_log2;
    score[j] = s;
    local_max = max(local_max, s);
  }
  const float top = workgroup_max(local_max);

  float local_sum = 0.0;
  for (uint j = lid; j < p.hw; j += WG) {
    const float e = exp2(score[j] - top);
    score[j] = e;
    local_sum += e;
  }
  const float inv = 1.0 / workgroup_sum(local_sum);  // its barriers publish every score

  for (uint ch = lid; ch < p.c; ch += WG) {
    float acc = 0.0;
    for (uint j = 0u; j < p.hw; ++j) acc += score[j] * v[img + j * p.c + ch];
    o[qrow + ch] = acc * inv;
  }
}
