#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// Spatial attention, every invocation loading its own keys and values; body in
// spatial_attention.glsl.
#define SHARED_KV 0
#define X_PAIRS 0
#include "spatial_attention.glsl"
