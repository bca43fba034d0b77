// GELU with the tanh approximation (torch's approximate='tanh', Hugging Face's gelu_new), f32.
// One definition for gelu_tanh.comp and the gated FFN (swiglu.comp's GELU gate, T5's).
float gelu_tanh(float v) {
  const float u = 0.7978845608028654 * (v + 0.044715 * v * v * v);
  // tanh(u) = 1 - 2 / (exp(2u) + 1): GLSL's tanh may return NaN for large |u| on some drivers;
  // this form saturates to +-1 (exp overflows to inf, 2 / inf = 0).
  const float t = 1.0 - 2.0 / (exp(2.0 * u) + 1.0);
  return 0.5 * v * (1.0 + t);
}
