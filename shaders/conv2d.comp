#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// Direct 2D convolution, channel-last, every invocation loading its own weights; body in
// conv2d.glsl.
#define SHARED_WEIGHTS 0
#define X_PAIRS 0
#include "conv2d.glsl"
