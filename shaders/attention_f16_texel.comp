#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_samplerless_texture_functions : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "common.glsl"
// Attention with an f16 KV cache read through uniform texel buffers (the CPU drivers' variant);
// the kernel is in attention_body.glsl.
#define CACHE_F16 1
#define TEXEL_LOADS 1
#include "attention_body.glsl"
