#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_ARB_gpu_shader_int64 : require
#include "common.glsl"
// Attention with an f16 KV cache, loading 64-bit words (needs shaderInt64); the kernel is in attention_body.glsl.
#define CACHE_F16 1
#define WIDE_LOADS 1
#include "attention_body.glsl"
