// silu(a) * b, LlamaGen's SwiGLU gate: the same expression as torch's silu in f32 (exp(-a)
// overflowing to inf gives the right limit -0). One definition for swiglu.comp and the matmul
// kernels that apply the gate to their activations as they load them, so a fused down projection
// sees exactly the values the separate gate dispatch would have written.
float silu_times(float a, float b) { return (a / (1.0 + exp(-a))) * b; }
vec4 silu_times(vec4 a, vec4 b) {
  return vec4(silu_times(a.x, b.x), silu_times(a.y, b.y), silu_times(a.z, b.z), silu_times(a.w, b.w));
}
