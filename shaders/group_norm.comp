#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// GroupNorm (+ swish) with subgroup reductions; body in group_norm.glsl.
#define SUBGROUP_REDUCE 1
#include "group_norm.glsl"
