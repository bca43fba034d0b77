#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "common.glsl"
// Attention with an f32 KV cache, loading 32-bit words (devices without int64); the kernel is in attention_body.glsl.
#define CACHE_F16 0
#define WIDE_LOADS 0
#include "attention_body.glsl"
