#pragma once
// Hyperparameters of a LlamaGen GPT (its ModelArgs), class- or text-conditional, read from a
// safetensors file's metadata (keys written by tools/convert_llamagen.py and tools/train_gpt.py;
// see tools/README.md).
#include <cstdint>
#include <string>

#include "engine/model/safetensors.h"
#include "engine/ops/rope.h"

namespace vkspec {

// Sampler settings a model card recommends (LlamaGen: cfg 4, top-k 2000, T 1, top-p 1).
struct SamplerDefaults {
  float cfg = 4.0f;
  float temperature = 1.0f;
  int64_t top_k = 2000;
  float top_p = 1.0f;
};

// LlamaGen's model_type: what the condition positions embed.
enum class ModelType {
  c2i,  // a class label (cls_token_num 1), through cls_embedding.embedding_table
  t2i,  // a value row per position: LlamaGen's caption embeddings (120 T5 tokens) through its
        // caption MLP, Janus-Pro's prompt token embeddings as they are
};

// What a user gives a model to condition an image on.
enum class ConditionInput {
  ClassLabel,         // --class N
  CaptionEmbeddings,  // --caption-embeddings FILE (a text encoder's outputs)
  Prompt,             // --prompt TEXT, through the family's own tokenizer and template
};

// How sequence positions become RoPE coordinates (ops/rope.h).
enum class RopeLayout {
  grid_2d,      // LlamaGen: image token n at (row n / grid, col n % grid), condition tokens zeroed
  sequence_1d,  // LLaMA / Janus-Pro: every position p rotates by p, condition tokens included
};

struct GptConfig {
  std::string family;  // the model family's name (engine/model/model_family.h), for messages
  ModelType model_type = ModelType::c2i;
  RopeLayout rope_layout = RopeLayout::grid_2d;
  ConditionInput input = ConditionInput::ClassLabel;
  std::string vq_file;  // the VQ decoder the model file names (metadata vq, beside it), or ""
  int64_t dim = 0, n_layer = 0, n_head = 0, head_dim = 0;
  int64_t n_kv_head = 0;  // key/value heads; only n_head (plain multi-head attention) runs
  int64_t vocab_size = 0;
  int64_t num_classes = 0;    // c2i only; the null class is id num_classes
  int64_t caption_dim = 0;    // t2i only: text-encoder width (LlamaGen: 2048)
  int64_t grid_size = 0;      // image tokens form grid_size x grid_size
  int64_t cls_token_num = 1;  // condition positions before the image tokens
  int64_t text_vocab = 0;     // a prompt family's text embedding table's rows (its prompts' ids); 0: none
  int64_t ffn_hidden = 0;     // find_multiple(int(2 * 4 * dim / 3), multiple_of) unless stored
  float rope_base = 10000.0f;
  float norm_eps = 1e-5f;
  // Chameleon's (Lumina-mGPT's) block: q and k LayerNorm per head before RoPE, in this many groups
  // of heads (0: none, as LlamaGen and Janus-Pro), and Swin placement (the sub-layer's output
  // normalised before its residual add, the 34B's) instead of pre-norm.
  int64_t qk_norm_groups = 0;
  float qk_norm_eps = 1e-5f;
  bool swin_norm = false;
  // Placed line breaks (Lumina-mGPT): a token the model is fed after the last image token of
  // every grid row, never sampled (engine/model/line_breaks.h). Methods see the grid alone;
  // the forward adds the breaks' queries, RoPE indices and KV slots. placed_id: the break's row of
  // the image-token table (vocab_size, one past the codes).
  bool line_breaks = false;
  SamplerDefaults defaults;

  int64_t image_tokens() const { return grid_size * grid_size; }
  int64_t seq_len() const { return cls_token_num + image_tokens(); }
  // Sequence position of image token n.
  int64_t position_of_token(int64_t n) const { return cls_token_num + n; }
  // RoPE coordinates of sequence position `index`, and the rows of the table they index.
  ops::RopePosition rope_position(int64_t index) const;
  int64_t rope_table_rows() const;
  // The sequence index RoPE takes for position `index`: the index itself, or with line breaks the
  // index in the released layout (each earlier row's break counted).
  int64_t rope_index(int64_t index) const;
  int64_t placed_id() const { return vocab_size; }

  // LlamaGen's keys (c2i or t2i): throws Error naming the file and key when a key is missing,
  // malformed or inconsistent. Other families read their own (engine/families/).
  static GptConfig from_file(const SafetensorsFile& f);
  // The checks every family's configuration passes (sizes positive and plausible, multi-head
  // attention, head_dim a multiple of 4); throws naming `path`.
  void validate(const std::string& path) const;
  // LlamaGen's FFN width: find_multiple(int(2 * 4 * dim / 3), multiple_of).
  static int64_t llamagen_ffn_hidden(int64_t dim, int64_t multiple_of = 256);
};

}  // namespace vkspec
