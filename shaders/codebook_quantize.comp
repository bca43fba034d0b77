#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// Codebook quantisation, every invocation loading the codes itself; body in
// codebook_quantize.glsl.
#define SHARED_CODES 0
#include "codebook_quantize.glsl"
