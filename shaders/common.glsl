// Shared by all shaders. Include after `#version 450`.
#extension GL_EXT_control_flow_attributes : enable

// Linear invocation index for 1D work laid out on a 2D grid (grids wider than
// maxComputeWorkGroupCount[0] spill into y; see ops::grid_1d).
uint linear_invocation() {
  return gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
}

// f16 data is bound as uint[] (two halves per word) so no 16-bit storage feature is needed;
// element i of such a buffer:
#define LOAD_HALF(buf, i) (unpackHalf2x16(buf[(i) >> 1u])[(i) & 1u])
