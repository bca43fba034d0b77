#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"
// How many lanes a subgroup really has, against the size the device reports: Mesa's lavapipe at
// LP_NATIVE_VECTOR_WIDTH=1024 reports 32 and runs 16, so every kernel that sizes shared memory or
// strides by the reported size writes past its arrays (Context checks this once on CPU drivers).
layout(local_size_x_id = 0) in;
layout(binding = 0) writeonly buffer O { uint o[]; };

void main() {
  const uint lanes = subgroupAdd(1u);
  if (gl_LocalInvocationIndex == 0u) {
    o[0] = lanes;
    o[1] = gl_SubgroupSize;
  }
}
