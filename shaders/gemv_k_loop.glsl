// The K loop of the GEMV kernels (matmul_gemv.comp, matmul_rows.comp), included inside main()
// after they declare float acc[GEMV_ROWS][R], uint wrow[R] (each weight row's first element),
// uint xrow[GEMV_ROWS] (each activation row's) and uint K. GEMV_LANES invocations split K, this
// one starting at vector GEMV_LANE; GEMV_X4(e, k) / GEMV_X1(e, k) return the activations at
// element k of the row starting at e, and GEMV_FOLD(m, k, x) what the sums take of activation
// row m's x at element k (x itself, or x times the norm's weight after adding x's squares to the
// row's sum: matmul_fold.glsl), each element seen once. The weight vectors are loaded first and
// each activation vector is used as it arrives, so the registers held are GEMV_ROWS x R sums, not
// the activation vectors.
if (VEC == 8u) {
  for (uint k = GEMV_LANE * 8u; k < K; k += GEMV_LANES * 8u) {
    vec4 lo[R], hi[R];
    [[unroll]] for (uint r = 0; r < R; ++r) load_w8(wrow[r] + k, lo[r], hi[r]);
    [[unroll]] for (uint m = 0; m < GEMV_ROWS; ++m) {
      const vec4 xlo = GEMV_FOLD(m, k, GEMV_X4(xrow[m], k)), xhi = GEMV_FOLD(m, k + 4u, GEMV_X4(xrow[m], k + 4u));
      [[unroll]] for (uint r = 0; r < R; ++r) acc[m][r] += dot(xlo, lo[r]) + dot(xhi, hi[r]);
    }
  }
} else if (VEC == 4u) {
  for (uint k = GEMV_LANE * 4u; k < K; k += GEMV_LANES * 4u) {
    vec4 wv[R];
    [[unroll]] for (uint r = 0; r < R; ++r) wv[r] = load_w4(wrow[r] + k);
    [[unroll]] for (uint m = 0; m < GEMV_ROWS; ++m) {
      const vec4 xv = GEMV_FOLD(m, k, GEMV_X4(xrow[m], k));
      [[unroll]] for (uint r = 0; r < R; ++r) acc[m][r] += dot(xv, wv[r]);
    }
  }
} else {
  for (uint k = GEMV_LANE; k < K; k += GEMV_LANES) {
    float wv[R];
    [[unroll]] for (uint r = 0; r < R; ++r) wv[r] = load_w1(wrow[r] + k);
    [[unroll]] for (uint m = 0; m < GEMV_ROWS; ++m) {
      const float xv = GEMV_FOLD(m, k, GEMV_X1(xrow[m], k));
      [[unroll]] for (uint r = 0; r < R; ++r) acc[m][r] += xv * wv[r];
    }
  }
}
