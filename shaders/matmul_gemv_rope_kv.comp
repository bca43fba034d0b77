#version 450
#extension GL_GOOGLE_include_directive : require
// The q|k|v projection for decoding on GPUs: the GEMV with RoPE and the KV-cache write in its stores.
#define ROPE_KV_FOLD
#include "matmul_gemv.glsl"
