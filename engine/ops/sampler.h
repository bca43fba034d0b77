#pragma once
// The sampler over many rows at once: CFG, temperature, top-k, top-p, softmax (the filtered
// probabilities are an output: speculative methods need p and q), and optionally a token per row.
// Tokens and probabilities are bit-identical with ref::sampler on every device
// (engine/ops/det_math.h).
//
// Semantics for row r (V = vocabulary size, all arithmetic f32 in exactly this order):
//  1. l_i = logits[r][i], or with CFG l_i = u_i + (c_i - u_i) * cfg_scale, computed
//     d = c - u; d = d * s; l = u + d. CfgLayout::Halves: cond row r, uncond row R + r of a
//     [2R, V] tensor (LlamaGen's torch.cat([cond, uncond])); Interleaved: rows 2r and 2r + 1.
//  2. z_i = l_i * inverse_temperature(T), where inverse_temperature(T) = 1 / max(T, 1e-5) in f32
//     on the host (a multiply, not LlamaGen's division, so every device rounds alike).
//  3. Ranking: by z descending, ties to the lower index (det::order_key; -0 == +0).
//     top_k in (0, V): keep the first top_k of that ranking; 0 or >= V: keep all.
//  4. m = max z; e_i = det::exp_det(z_i - m) for kept i, else 0 (exp_det is 0 below e^-64);
//     S = fixed-order chunk-tree sum of e (det::chunk_tree); p_i = e_i * det::recip_det(S).
//  5. top_p < 1 (LlamaGen's top_k_top_p_filtering: the smallest prefix of the ranking whose
//     probability exceeds top_p, never empty), on fixed-point probabilities so that the
//     cumulative sums are exact integers on every device: w_i = trunc(p_i * 2^31) (u32),
//     W = sum w_i, B = floor(top_p_fixed(top_p) * W / 2^24); ranking by e descending, ties to the
//     lower index; keep the ranking up to and including the first element whose inclusive
//     prefix of w exceeds B; zero the rest and recompute S and p. top_p <= 0 keeps one token.
//  E. params.entropy.on (the entropy-aware temperature of Ma et al., NeurIPS 2025, in the order of
//     their released code, ARsample's generate.py `sample`: CFG, then top-k/top-p on the
//     untempered logits, then the entropy of that filtered distribution sets the temperature):
//     steps 2-5 run with inverse temperature 1 (z_i = l_i, so top-k and top-p rank and cut the
//     untempered distribution), then
//       H = log_det(S) + D * recip_det(S), D = chunk-tree sum of e_i * (m - z_i) (the entropy in
//         nats of p = e / S: ln p_i = z_i - m - ln S; filtered elements have e_i = 0 and add 0),
//       x = H * nb (nb = -(1 / b) in f32 on the host); k = a * exp_det(x); k = k + c;
//       T = temperature * k; t = recip_det(max(T, 1e-5)),
//     and the kept elements' weights are recomputed tempered: z'_i = l_i * t, m' = m * t (the
//     maximum of z', rounding being monotone), e_i = exp_det(z'_i - m') for the elements steps 3-5
//     kept (with top-p: those with e_i > 0; else those top-k kept, or all), else 0; S and p anew.
//     Categorical and GumbelMax then draw from these with z' in place of z; Argmax is step 7's
//     on z = l (a positive scale keeps the argmax). Off: bit-identical to the steps above.
//  6. probs[r][i] = p_i (identical bits on every device and in ref::sampler).
//  7. tokens[r] (mode != None):
//     Categorical: t = philox::uniform(seed, positions[r], purpose, 0) * S; det::descend over
//       the chunk tree of e (inverse CDF in the fixed order; never a zero-probability token).
//     GumbelMax: argmax over e_i > 0 of z_i + philox::gumbel(seed, positions[r], purpose, i),
//       ties to the lower index. The noise depends only on (seed, position, purpose, i), so two
//       samplers (draft and target, or two iterations) given the same key share it.
//     Argmax: the lowest index with z_i == m (filters never remove it).
//     purpose is params.purpose, or purposes[r] where a purposes tensor is given (rows drawn for
//     different ends, such as Hawk's heads, in one dispatch); seed likewise params.seed, or
//     seeds[r] where a seeds tensor is given (the images of a batch, each under its own seed).
// Rows need at least one finite logit; NaN and +inf logits are not supported.
#include <algorithm>
#include <cstdint>

#include "engine/ops/philox.h"
#include "engine/vk/command_stream.h"

namespace vkspec::ops {

enum class SampleMode : uint32_t { None = 0, Categorical = 1, GumbelMax = 2, Argmax = 3 };
enum class CfgLayout : uint32_t { Halves = 0, Interleaved = 1 };

// T = T0 * (a * exp(-H / b) + c) per row, H the entropy in nats of the filtered distribution
// (step E above). The defaults are the released code's constants.
struct EntropyTemperature {
  bool on = false;
  float a = 2.5f, b = 3.0f, c = 0.6f;
};

struct SamplerParams {
  float temperature = 1.0f;
  uint32_t top_k = 0;  // 0 = off
  float top_p = 1.0f;  // >= 1 = off
  bool cfg = false;
  float cfg_scale = 1.0f;
  CfgLayout cfg_layout = CfgLayout::Halves;
  SampleMode mode = SampleMode::Categorical;
  uint64_t seed = 0;
  uint32_t purpose = philox::purpose_word(philox::Purpose::Sample);
  EntropyTemperature entropy;
};

inline float inverse_temperature(float t) { return 1.0f / std::max(t, 1e-5f); }
// Step E's nb: -(1 / b), computed once on the host so every device multiplies by the same bits.
inline float entropy_neg_inv_b(float b) { return -(1.0f / b); }
// top_p in units of 2^-24 (truncated); 2^24 means off.
inline uint32_t top_p_fixed(float top_p) {
  if (!(top_p < 1.0f)) return 1u << 24;
  return top_p > 0.0f ? static_cast<uint32_t>(top_p * 16777216.0f) : 0u;
}

// logits: f32 [R, V], or [2R, V] with CFG. positions: u32/i32 [R] (read by Categorical and
// GumbelMax; may be an empty TensorView otherwise). probs: f32 [R, V], written. tokens: u32/i32 [R],
// written unless mode is None (then it may be an empty TensorView). probs is also the kernel's
// scratch, so it must not alias logits. purposes: u32/i32 [R] or an empty TensorView (params.purpose
// for every row). seeds: u32 [R, 2] (each row's seed, low word first) or an empty TensorView
// (params.seed for every row).
void sampler(CommandStream& s, const TensorView& logits, const TensorView& positions, const SamplerParams& params,
             const TensorView& probs, const TensorView& tokens, const TensorView& purposes = {},
             const TensorView& seeds = {});

}  // namespace vkspec::ops
