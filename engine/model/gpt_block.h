#pragma once
// The weights of one LlamaGen transformer block on the device, as the GPT and the EAGLE drafter
// (one such block over the GPT's features) load them.
#include <string>

#include "engine/model/gpt_config.h"
#include "engine/model/weights.h"

namespace vkspec {

struct GptBlockWeights {
  Tensor attention_norm;  // empty when the block has none (the EAGLE drafter's first block)
  Tensor ffn_norm, wqkv, wo;
  Tensor w13;  // w1 and w3 fused into one [2H, D] matrix so the FFN input is one matmul
  Tensor w2;
};

// Loads `prefix` + attention_norm / ffn_norm / attention.wqkv / attention.wo / feed_forward.w1|w2|w3
// with cfg's shapes, matrices as `weights`, norms f32.
GptBlockWeights load_gpt_block(Context& ctx, WeightStore& w, const std::string& prefix, const GptConfig& cfg,
                               DType weights, bool attention_norm = true);

}  // namespace vkspec
