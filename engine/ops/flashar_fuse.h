#pragma once
// FlashAR's fused logits (Zhou et al., arXiv 2605.09430; engine/model/flashar_model.h): each output
// row is a row of the backbone's H logits, a row of the vertical branch's V logits, or their gated
// mix, as `sources` says per row (u32 [rows, 3]: H row, V row, kind):
//   kind 1 (H only):  fused = H[h_row]                 gates = 1
//   kind 2 (V only):  fused = V[v_row]                 gates = 0
//   kind 0 (gated):   per head: z = [n(H[h_row]); n(V[v_row])],
//                       n(x) = clamp((x - mean x) / (sqrt(mean((x - mean x)^2)) + 1e-6), -6, 6)
//                     joint (LlamaGen-FlashAR's `_hv_gate`): x = [H[h_row]; V[v_row]],
//                       z = clamp((x - mean x) / sqrt(max(mean((x - mean x)^2), 1e-6)), -6, 6)
//                     a = fc1 z                               (fc1: f32 [P, 2 vocab])
//                     g = sigmoid(sum_k fc2[k] SiLU(a_k) + bias) (gate: f32 [P + 1], bias last)
//                     fused = g H + (1 - g) V, element by element; gates = g
// The rows of H and V may be any rows of the two tensors (a target's left and upper neighbours).
// Sums run in a fixed order per workgroup size: the same bits on a device for a given size, equal
// to ref::flashar_fuse up to rounding.
#include "engine/vk/command_stream.h"

namespace vkspec::ops {

// How a gated row's two logit vectors are normalised before fc1 (above).
enum class FlashArGateNorm : uint32_t { PerHead = 0, Joint = 1 };

// The gate's weights: fc1 f32 [P, 2 vocab], fc2 f32 [P + 1] (its weights, then its bias), P <= 256.
// (A constant gate g = sigmoid(b) is fc1 = 0, fc2 = 0 and bias b: P = 1.)
struct FlashArGate {
  TensorView fc1, fc2;
  FlashArGateNorm norm = FlashArGateNorm::PerHead;
};

// h, v: f32 [*, vocab]; sources: u32 [rows, 3]; fused: f32 [rows, vocab]; gates: f32 [rows].
void flashar_fuse(CommandStream& s, const TensorView& h, const TensorView& v, const TensorView& sources,
                  const FlashArGate& gate, const TensorView& fused, const TensorView& gates);

}  // namespace vkspec::ops
