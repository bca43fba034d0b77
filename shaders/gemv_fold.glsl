// The norm folded into the GEMV kernels' K loop (gemv_k_loop.glsl's GEMV_FOLD): each activation
// element adds its square to its row's sum as it arrives, and the sums take it times the norm's
// weight (matmul_fold.glsl: the row's scale comes after the sums). Include after declaring X_NORM
// (matmul_fold.glsl), the binding `vec4 g4[]` and FOLD_ROWS, the activation rows held.

float fold_ss[FOLD_ROWS];  // this invocation's share of each row's sum of squares

vec4 fold_x(uint m, uint k, vec4 x) {
  if (!X_NORM) return x;
  fold_ss[m] += dot(x, x);
  return x * g4[k >> 2u];
}
float fold_x(uint m, uint k, float x) {
  if (!X_NORM) return x;
  fold_ss[m] += x * x;
  return x * g4[k >> 2u][k & 3u];
}
