#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// conv2d with weight loads shared across the subgroup (CPU drivers); body in conv2d.glsl.
#define SHARED_WEIGHTS 1
#define X_PAIRS 0
#include "conv2d.glsl"
