#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// Spatial attention for CPU drivers: key/value loads shared across the subgroup, every access
// 64 bits wide (C even); body in spatial_attention.glsl.
#define SHARED_KV 1
#define X_PAIRS 1
#include "spatial_attention.glsl"
