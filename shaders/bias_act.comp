#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// y = residual + act(x + bias[i % channels]) over rows of `channels` f32 values; act is identity,
// ReLU, SiLU (the expression of swish.comp, so the bits equal bias_act then swish) or GELU with erf
// (torch's nn.GELU(), Janus-Pro's aligner and image head). Linear layers: matmul has no bias; the
// classifier's ReLUs; the draft heads' SiLU blocks and residual adds.
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 1) readonly buffer Bias { float bias[]; };
layout(binding = 2) writeonly buffer Y { float y[]; };
layout(binding = 3) readonly buffer Residual { float residual[]; };
layout(push_constant) uniform P {
  uint n;
  uint channels;  // 0: no bias
  uint act;       // 0 identity, 1 ReLU, 2 SiLU, 3 GELU (erf)
  uint has_residual;
} p;
// erf by Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7, under f32's spacing near 1,
// where GELU's 1 + erf sits): GLSL has no erf.
float erf_as(float x) {
  const float t = 1.0 / (1.0 + 0.3275911 * abs(x));
  const float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return sign(x) * (1.0 - poly * exp(-x * x));
}

void main() {
  const uint i = linear_invocation();
  if (i >= p.n) return;
  float v = x[i];
  if (p.channels != 0u) v += bias[i % p.channels];
  if (p.act == 1u) v = max(v, 0.0);
  if (p.act == 2u) v = v / (1.0 + exp(-v));  // as swish.comp: -0 for v < -88, the limit
  if (p.act == 3u) v = 0.5 * v * (1.0 + erf_as(v * 0.70710678118654752));
  if (p.has_residual != 0u) v = residual[i] + v;
  y[i] = v;
}
