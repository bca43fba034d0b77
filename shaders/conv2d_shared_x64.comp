#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// conv2d_shared reading x as 64-bit channel pairs (Ci even); body in conv2d.glsl.
#define SHARED_WEIGHTS 1
#define X_PAIRS 1
#include "conv2d.glsl"
