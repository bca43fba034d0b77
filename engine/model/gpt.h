#pragma once
// An autoregressive image GPT on the engine: the LLaMA-style trunk every family shares (pre-norm
// blocks with fused wqkv, RoPE, plain multi-head attention over a KV cache, SwiGLU FFN, final
// RMSNorm) between the parts its model family makes (engine/model/model_family.h): LlamaGen's
// class or caption embedding, token table and output head (autoregressive/models/gpt.py), or
// Janus-Pro's prompt embeddings, gen_embed + gen_aligner and gen_head. One forward records every
// dispatch into a CommandStream; logits and the final (normalised) hidden state of every query
// stay on the device for the sampler.
#include <memory>
#include <string>
#include <vector>

#include "engine/model/gpt_batch.h"
#include "engine/model/gpt_block.h"
#include "engine/model/gpt_config.h"
#include "engine/model/gpt_family_parts.h"
#include "engine/model/image_head.h"
#include "engine/model/kv_cache.h"
#include "engine/model/weights.h"
#include "engine/vk/command_stream.h"

namespace vkspec {

inline constexpr int64_t kMaxBatchRows = 512;

struct GptOptions {
  DType weights = DType::F16;  // matrices on the device; norms stay f32
  DType kv = DType::F16;       // KV cache element type
  // Most batch rows: 2 = one image with classifier-free guidance (cond, uncond); 2 per image when
  // several images share each forward (batched decoding), up to kMaxBatchRows.
  int64_t batch_rows = 2;
  int64_t max_queries = 64;  // most queries per batch row in one forward
  // Tensor-name prefixes of another model stored in the same file (FlashAR's `vertical.` branch
  // and `gate.`): loaded by that model, so the GPT neither loads nor refuses them.
  std::vector<std::string> companion_prefixes;
};

// A copy of the residual stream as it enters block `layer` (0 .. n_layer; n_layer: after the last
// block, before the final norm) into `into` (f32 [>= rows, dim]; rows: the forward's batch rows x
// queries, or with placed line breaks its placed batch's, breaks included: GptBatch::placed):
// FlashAR's vertical branch reads the state entering its start layer. layer < 0: none.
struct GptTap {
  int64_t layer = -1;
  TensorView into;
};

// Device views written by Gpt::forward, valid until the next forward of the same model.
struct GptOutputs {
  TensorView logits;  // f32 [batch_rows * T, vocab]; row b * T + t
  TensorView hidden;  // f32 [batch_rows * T, dim], after the final norm (what `output` reads)
};

class Gpt {
 public:
  Gpt(Context& ctx, const std::string& path, const GptOptions& options = {});
  // From a file already open, or one built in memory (engine/model/synthetic_gpt.h); path() is its name.
  Gpt(Context& ctx, SafetensorsFile file, const GptOptions& options = {});

  const GptConfig& config() const { return cfg_; }
  const GptOptions& options() const { return opt_; }
  const std::string& path() const { return path_; }
  uint64_t weight_bytes() const { return weight_bytes_; }
  // Records the family's image head (LlamaGen's output matrix, Janus-Pro's gen_head MLP) on
  // normed hidden states [R, dim] into logits [R, vocab]: how draft heads, latent heads and
  // drafters, which predict such states, get their logits. Any R.
  void project(CommandStream& s, const TensorView& hidden, const TensorView& logits) const;
  // The image-token embedding table [vocab, dim], shared with the EAGLE drafter and GSD; with
  // placed line breaks one row more, the break's (GptConfig::placed_id).
  const Tensor& token_embeddings() const { return parts_->token_embeddings(); }
  // Matrix weights one forward streams: the blocks' and the head's (embeddings are gathered).
  int64_t matrix_params() const {
    return cfg_.n_layer * (4 * cfg_.dim * cfg_.dim + 3 * cfg_.dim * cfg_.ffn_hidden) + head_->params();
  }
  // The condition for a text prompt (a family that takes prompts); throws Error otherwise.
  std::shared_ptr<const Condition> prompt_condition(const std::string& prompt) const {
    return parts_->prompt_condition(prompt);
  }
  bool takes_prompt() const { return parts_->takes_prompt(); }
  // Another model's condition as this one takes it (GptFamilyParts::own_condition); nullptr: as given.
  std::shared_ptr<const Condition> own_condition(const Condition& c) const { return parts_->own_condition(c); }

  // A KV cache for this model: slots = the sequence plus `scratch` spare slots; batch_rows up to
  // the model's (0 = the model's; 1 when sampling without CFG).
  KvCache make_cache(int64_t scratch = 0, int64_t batch_rows = 0) const;

  // Records one forward of `batch` against `cache`. Reads the batch's inputs when the stream
  // runs, so the batch must outlive the submission. A tap copies the residual stream entering one
  // block out.
  GptOutputs forward(CommandStream& s, const GptBatch& batch, const KvCache& cache, const GptTap& tap = {});
  // Queries per batch row a forward may run: max_queries, twice that with placed line breaks
  // (a break after each query at most).
  int64_t placed_queries() const { return cfg_.line_breaks ? 2 * opt_.max_queries : opt_.max_queries; }

 private:
  using Layer = GptBlockWeights;
  void embed(CommandStream& s, const GptBatch& batch, const TensorView& x);

  Context& ctx_;
  std::string path_;
  GptConfig cfg_;
  GptOptions opt_;
  uint64_t weight_bytes_ = 0;
  std::unique_ptr<GptFamilyParts> parts_;
  std::unique_ptr<ImageHead> head_;  // the family's (ModelFamilyDescriptor::make_head, no prefix)
  Tensor norm_, rope_table_;
  std::vector<Layer> layers_;
  // Activations sized for batch_rows * max_queries rows.
  GptBlockActivations act_;
  Tensor logits_, attn_ws_;
  Tensor hidden_;  // with placed line breaks: the method's rows of the final normed state
};

}  // namespace vkspec
