#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// Codebook quantisation with code loads shared across the subgroup (CPU drivers); body in
// codebook_quantize.glsl.
#define SHARED_CODES 1
#include "codebook_quantize.glsl"
