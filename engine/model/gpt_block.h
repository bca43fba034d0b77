#pragma once
// One LlamaGen transformer block on the device, as the GPT and the EAGLE drafter (one such block
// over the GPT's features) load and run it.
#include <string>

#include "engine/model/gpt_batch.h"
#include "engine/model/gpt_config.h"
#include "engine/model/kv_cache.h"
#include "engine/model/weights.h"

namespace vkspec {

struct GptBlockWeights {
  Tensor attention_norm;  // empty when the block has none (the EAGLE drafter's first block)
  Tensor ffn_norm, wqkv, wo;
  Tensor w13;  // w1 and w3 fused into one [2H, D] matrix so the FFN input is one matmul
  Tensor w2;
  // Chameleon's q/k LayerNorm: q's groups then k's, f32 [2 groups, head_dim], so one dispatch
  // normalises the q|k columns (2 n_head heads, n_head / groups per group); empty when none.
  Tensor qk_norm_weight, qk_norm_bias;
};

// Loads `prefix` + attention_norm / ffn_norm / attention.wqkv / attention.wo / feed_forward.w1|w2|w3
// (and attention.q_norm / k_norm .weight / .bias where cfg has q/k norms) with cfg's shapes,
// matrices as `weights`, norms f32.
GptBlockWeights load_gpt_block(Context& ctx, WeightStore& w, const std::string& prefix, const GptConfig& cfg,
                               DType weights, bool attention_norm = true);

// What a block's forward writes, for up to `rows` query rows (batch rows x queries), f32: the
// residual x, q|k|v, the attention output and the FFN's w1|w3 output; xn and ffn_hidden hold the
// normed activations, a product before its residual add and the SwiGLU hidden state where a
// projection's kernel does not fold its norm, add or gate in (ops::MatmulFusion).
struct GptBlockActivations {
  Tensor x, xn, qkv, attn, ffn_in, ffn_hidden;
};
GptBlockActivations make_block_activations(Context& ctx, int64_t rows, const GptConfig& cfg, const std::string& owner);
// The RoPE table of cfg's layout (ops::rope_2d_table or ops::rope_1d_table): a model's, and a
// drafter's that runs at its base's positions.
Tensor make_rope_table(Context& ctx, const GptConfig& cfg);
// The attention workspace of a model's forwards of up to batch_rows x queries rows, sized for the
// most splits any of them plans (one batch row per image: record_gpt_block's batch-invariant split).
Tensor make_attention_workspace(Context& ctx, const GptConfig& cfg, int64_t batch_rows, int64_t queries,
                                const std::string& owner);

// What every block of one forward runs on: the model's config, activations, RoPE table
// (make_rope_table) and attention workspace, and the forward's batch, its rows x queries rows
// and cache.
struct GptBlockForward {
  const GptConfig& cfg;
  const GptBlockActivations& act;
  const Tensor& rope_table;
  const Tensor& attn_ws;
  const GptBatch& batch;
  int64_t rows;
  const KvCache& cache;
};

// Records block l on the residual stream f.act.x for the forward's rows: x += attention(norm(x)),
// then x += ffn(norm(x)) (LlamaGen's pre-norm block; no attention norm where the block has none),
// or with cfg.swin_norm x += norm(attention(x)), x += norm(ffn(x)): q|k|v, the q/k norms where
// the config has them, RoPE, the write of k and v into the cache's layer l, attention under the
// batch's mask, the output projection, w1|w3, SwiGLU and w2.
void record_gpt_block(CommandStream& s, const GptBlockWeights& block, int64_t l, const GptBlockForward& f);

}  // namespace vkspec
