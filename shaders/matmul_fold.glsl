// What the matmul kernels fold into their loads and stores (engine/ops/matmul.h, MatmulFusion),
// so that a projection and the ops around it are one dispatch: on GPUs decoding is bound by
// dispatch latency, on lavapipe each dispatch with worker threads costs a thread handoff.
// Include after defining FOLD_NORM_ID and FOLD_ACCUMULATE_ID, the constant ids that follow the
// kernel's own (the host lists them in that order).

// x's rows are RMS-normalised and scaled by the norm's weight g as they load (LlamaGen's pre-norm
// before a projection). By linearity the norm's scale, one number per row, comes after the sum:
// y[m, n] = rsqrt(mean_k x[m, k]^2 + eps) * sum_k x[m, k] g[k] w[n, k], the squares summed in the
// same pass over x. (The separate rms_norm scales each element first: the same value to rounding.)
layout(constant_id = FOLD_NORM_ID) const bool X_NORM = false;
// y += the product (the residual connection after a projection) instead of y = it; y + product,
// as ops::add would sum them, so the residual stream keeps its bits.
layout(constant_id = FOLD_ACCUMULATE_ID) const bool Y_ACCUMULATE = false;

// The push constants of the q|k|v projections' RoPE and cache write (rope_kv_fold.glsl), after a
// kernel's own.
#define ROPE_KV_PUSH uint row0, T, H, head_dim, S, slot_batch_stride, pos_rows, n_pos;

float rms_scale(float sum_squares, uint k, float eps) { return inversesqrt(sum_squares / float(k) + eps); }

// Writes sum * scale into y, added to what y holds where Y_ACCUMULATE.
#define store_y(Y, SUM, SCALE)                               \
  {                                                          \
    const float v_ = X_NORM ? (SUM) * (SCALE) : (SUM);       \
    Y = Y_ACCUMULATE ? Y + v_ : v_;                          \
  }
