#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// GroupNorm (+ swish) with a shared-memory tree reduction, for devices without subgroup
// arithmetic; body in group_norm.glsl.
#define SUBGROUP_REDUCE 0
#include "group_norm.glsl"
