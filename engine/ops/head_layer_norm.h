#pragma once
// Chameleon's (Lumina-mGPT's) q/k LayerNorm: each head's vector of one token is normalised over
// head_dim (mean and biased variance, computed in f32), then scaled and shifted by the affine
// parameters of its group; `groups` groups of heads / groups consecutive heads each (the 7B: one
// group for all heads). In place, on the q or k columns of the fused wqkv output, before RoPE.
#include "engine/ops/head_rows.h"
#include "engine/vk/command_stream.h"

namespace vkspec::ops {

// x: the head rows to normalise (HeadRows::columns of the qkv output), in place. weight, bias:
// f32 [groups, head_dim] with groups dividing x.heads. Needs subgroup arithmetic in compute shaders.
void head_layer_norm(CommandStream& s, const HeadRows& x, const TensorView& weight, const TensorView& bias, float eps);

}  // namespace vkspec::ops
