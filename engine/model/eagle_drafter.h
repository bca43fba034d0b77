#pragma once
// An EAGLE-style feature drafter (Li et al. 2024, EAGLE and EAGLE-2; the drafter LANTERN drafts
// with) on a frozen GPT, as tools/vkspec_models.py EagleDrafter and assets/fmnist_eagle_drafter16.md
// define it. Feature f(n) is the base's final hidden state after its final norm at the query whose
// logits predict image token n (GptOutputs::hidden). Drafter element j reads token j and f(j):
// x = fc([RMSNorm(E[token j]) ; f(j)]) with E the base's own image-token table, then LlamaGen
// blocks (the first without attention_norm) with the base's RoPE (LlamaGen's 2D, Janus-Pro's 1D)
// at the sequence position that holds token j, causal attention over the drafter's own elements
// (its own KV cache), no final norm. The output g(j) predicts f(j + 1); its draft logits are the base's image head on
// g(j), per CFG row, combined like the base's. A chain feeds g(j) as the feature of element j + 1.
#include <string>
#include <vector>

#include "engine/model/gpt.h"

namespace vkspec {

class EagleDrafter {
 public:
  // Loads a drafter trained on `base` (shapes must match) for at most max_queries elements per
  // batch row and forward.
  EagleDrafter(Context& ctx, const std::string& path, const Gpt& base, int64_t max_queries = 64);

  const std::string& path() const { return path_; }
  // The drafter's shapes as a GPT's (the base's, with the drafter's layer count): what its
  // batches (GptQueries, GptBatch) and KV cache are built from.
  const GptConfig& config() const { return cfg_; }
  int64_t max_queries() const { return max_queries_; }
  int64_t batch_rows() const { return batch_rows_; }
  uint64_t weight_bytes() const { return weight_bytes_; }

  // A KV cache with one slot per element of the image (slot = the element's index j is the
  // usual layout) plus `scratch` spare slots.
  KvCache make_cache(int64_t batch_rows, int64_t scratch = 0) const;

  // The sequence position of element j (the base's query that is fed token j): its RoPE position.
  int64_t element_position(int64_t j) const { return cfg_.cls_token_num + j; }

  // Records one forward. batch: T queries per batch row at element positions (no condition
  // queries), fed the elements' tokens; features: f32 [B * T, dim], row b * T + t the feature of
  // query t in batch row b. Returns hidden = g (f32 [B * T, dim]) and logits (f32 [B * T, vocab]),
  // valid until the next forward. Reads the batch and features when the stream runs.
  GptOutputs forward(CommandStream& s, const GptBatch& batch, const TensorView& features, const KvCache& cache);

 private:
  using Layer = GptBlockWeights;  // the first has no attention_norm (EAGLE's layer 0)

  Context& ctx_;
  std::string path_;
  const Gpt& base_;
  GptConfig cfg_;
  int64_t max_queries_, batch_rows_;
  uint64_t weight_bytes_ = 0;
  Tensor embed_norm_;    // f32 [dim]; empty: the embedding enters fc unnormalised
  Tensor fc_embedding_;  // [dim, dim]: fc's columns that multiply the normalised embedding
  Tensor fc_feature_;    // [dim, dim]: fc's columns that multiply the feature
  Tensor fc_bias_;       // f32 [dim]
  std::vector<Layer> layers_;
  Tensor rope_table_;
  GptBlockActivations act_;
  Tensor embedded_, out_, logits_, attn_ws_;
};

}  // namespace vkspec
