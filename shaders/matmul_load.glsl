// Loads shared by the matmul shaders. Include after declaring the spec constant W_F16 and the
// bindings `vec4 x4[]` (f32 activations) and `uvec4 w4[]` (weights: packed halves when W_F16,
// else f32 bits). Both are declared as 16-byte vectors so aligned paths issue wide loads; the
// unaligned helpers index one component, which stays inside a binding whose size is any
// multiple of 4 bytes.

// Element e of x.
float load_x1(uint e) { return x4[e >> 2u][e & 3u]; }
// Elements e..e+3 of x; e % 4 == 0.
vec4 load_x4(uint e) { return x4[e >> 2u]; }

// Element e of w: f16 element e lives in word e >> 1, half e & 1.
float load_w1(uint e) {
  if (W_F16) return unpackHalf2x16(w4[e >> 3u][(e >> 1u) & 3u])[e & 1u];
  return uintBitsToFloat(w4[e >> 2u][e & 3u]);
}
// Elements e..e+3 of w; e % 4 == 0.
vec4 load_w4(uint e) {
  if (W_F16) {
    const uvec4 u = w4[e >> 3u];
    const uvec2 h = (e & 4u) != 0u ? u.zw : u.xy;
    return vec4(unpackHalf2x16(h.x), unpackHalf2x16(h.y));
  }
  return uintBitsToFloat(w4[e >> 2u]);
}
// Elements e..e+7 of w; e % 8 == 0.
void load_w8(uint e, out vec4 lo, out vec4 hi) {
  if (W_F16) {
    const uvec4 u = w4[e >> 3u];
    lo = vec4(unpackHalf2x16(u.x), unpackHalf2x16(u.y));
    hi = vec4(unpackHalf2x16(u.z), unpackHalf2x16(u.w));
  } else {
    lo = uintBitsToFloat(w4[e >> 2u]);
    hi = uintBitsToFloat(w4[(e >> 2u) + 1u]);
  }
}
