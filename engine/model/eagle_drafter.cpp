#include "engine/model/eagle_drafter.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "engine/model/base_fit.h"
#include "engine/model/gpt_block.h"
#include "engine/model/weights.h"
#include "engine/ops/attention.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/embedding.h"
#include "engine/ops/kv_write.h"
#include "engine/ops/matmul.h"
#include "engine/ops/rms_norm.h"
#include "engine/ops/rope.h"

namespace vkspec {
namespace {

// Metadata the engine's contract depends on, with the one value it implements.
constexpr MetaValue kContract[] = {{"feature", "post_norm_hidden"},
                                   {"predicts", "post_norm_hidden"},
                                   {"input", "fc(cat(embed_norm(tok_embeddings(token_j)), feature_j))"},
                                   {"embedding", "shared_base_tok_embeddings"},
                                   {"output", "shared_base_output"},
                                   {"first_layer_attention_norm", "none"},
                                   {"final_norm", "none"},
                                   {"rope_index", "token_index_plus_cls_token_num"}};

}  // namespace

EagleDrafter::EagleDrafter(Context& ctx, const std::string& path, const Gpt& base, int64_t max_queries)
    : ctx_(ctx),
      path_(path),
      base_(base),
      cfg_(base.config()),
      max_queries_(max_queries),
      batch_rows_(base.options().batch_rows) {
  if (max_queries < 1) throw Error(path + ": an EAGLE drafter needs at least one query per forward");
  // On a family with placed line breaks the drafter runs on the grid alone, at the method's
  // positions: the breaks live in the target's forward, and the feature it gets for a row end is
  // the break's state, the one that predicts the next row's first token.
  cfg_.line_breaks = false;
  // EAGLE's blocks are plain LLaMA decoder layers (pre-norm, no q/k norms) whatever the base's.
  cfg_.qk_norm_groups = 0;
  cfg_.swin_norm = false;
  WeightStore ws(ctx, path);
  const SafetensorsFile& f = ws.file();
  require_kind(f, path, "eagle_drafter", "an EAGLE drafter");
  const GptConfig& b = base.config();
  require_base_family(f, path, "an EAGLE drafter", base);
  const auto mismatch = [&](const char* key, int64_t want) { return !f.has_meta(key) || f.meta_int(key) != want; };
  for (const auto& [key, want] : std::vector<std::pair<const char*, int64_t>>{{"dim", b.dim},
                                                                              {"n_head", b.n_head},
                                                                              {"head_dim", b.head_dim},
                                                                              {"ffn_hidden", b.ffn_hidden},
                                                                              {"vocab_size", b.vocab_size},
                                                                              {"grid_size", b.grid_size}})
    if (mismatch(key, want))
      throw Error(path + ": drafter " + key + " = " + (f.has_meta(key) ? f.meta(key) : std::string("(missing)")) +
                  " does not fit the base model " + base.path() + " (" + key + " " + std::to_string(want) + ")");
  require_meta_values(f, path, kContract);
  const std::string embed_norm = f.has_meta("embed_norm") ? f.meta("embed_norm") : std::string();
  if (embed_norm != "rmsnorm" && embed_norm != "none")
    throw Error(path + ": metadata embed_norm = '" + embed_norm + "', the engine implements 'rmsnorm' or 'none'");
  cfg_.n_layer = f.meta_int("n_layer");
  if (cfg_.n_layer < 1 || cfg_.n_layer > 64)
    throw Error(path + ": n_layer " + std::to_string(cfg_.n_layer) + " outside [1, 64]");

  const int64_t D = cfg_.dim;
  const DType wt = base.options().weights;
  const std::string from = "dim=" + std::to_string(D);
  if (embed_norm == "rmsnorm") embed_norm_ = ws.load("eagle.embed_norm.weight", {D}, DType::F32, from);
  // fc's weight [dim, 2 dim] is split into its two halves so the concatenated input never exists:
  // x = fc_embedding @ e + fc_feature @ f + bias.
  const std::string fc = "eagle.fc.weight", fc_from = "dim=" + std::to_string(D) + ": [dim, 2 dim]";
  fc_embedding_ = ws.load_columns(fc, {D, 2 * D}, 0, D, wt, "eagle fc (embedding half)", fc_from);
  fc_feature_ = ws.load_columns(fc, {D, 2 * D}, D, D, wt, "eagle fc (feature half)", fc_from);
  fc_bias_ = ws.load("eagle.fc.bias", {D}, DType::F32, from);
  // EAGLE's first block has no input norm.
  for (int64_t l = 0; l < cfg_.n_layer; ++l)
    layers_.push_back(load_gpt_block(ctx, ws, "eagle.layers." + std::to_string(l) + ".", cfg_, wt, l > 0));
  const std::vector<std::string> unused = ws.unused();
  if (!unused.empty())
    throw Error(path + ": tensors the EAGLE drafter does not use (n_layer " + std::to_string(cfg_.n_layer) +
                "): " + unused[0]);
  weight_bytes_ = ws.uploaded_bytes();
  rope_table_ = make_rope_table(ctx, cfg_);  // the base's layout: its positions

  const int64_t R = batch_rows_ * max_queries_;
  embedded_ = ctx.tensor(DType::F32, {R, D}, "eagle embedded tokens");
  act_ = make_block_activations(ctx, R, cfg_, "eagle");
  out_ = ctx.tensor(DType::F32, {R, D}, "eagle predicted features");
  logits_ = ctx.tensor(DType::F32, {R, cfg_.vocab_size}, "eagle draft logits");
  attn_ws_ = make_attention_workspace(ctx, cfg_, batch_rows_, max_queries_, "eagle");
}

KvCache EagleDrafter::make_cache(int64_t batch_rows, int64_t scratch) const {
  if (batch_rows < 1 || batch_rows > batch_rows_)
    throw Error(path_ + ": a KV cache for " + std::to_string(batch_rows) + " batch rows, drafter built for at most " +
                std::to_string(batch_rows_));
  return KvCache(ctx_, cfg_, batch_rows, cfg_.seq_len() + scratch, base_.options().kv);
}

GptOutputs EagleDrafter::forward(CommandStream& s, const GptBatch& batch, const TensorView& features,
                                 const KvCache& cache) {
  const int64_t B = batch.batch_rows(), T = batch.tokens_per_row();
  if (B < 1 || B > batch_rows_)
    throw Error(path_ + ": batch has " + std::to_string(B) + " rows, drafter built for at most " +
                std::to_string(batch_rows_));
  if (T > max_queries_)
    throw Error(path_ + ": " + std::to_string(T) + " queries exceed max_queries " + std::to_string(max_queries_));
  if (batch.condition_queries() != 0) throw Error(path_ + ": the drafter has no condition queries");
  const int64_t R = B * T, D = cfg_.dim;
  if (features.shape.rank != 2 || features.shape[0] != R || features.shape[1] != D)
    throw Error(path_ + ": features must be f32 [" + std::to_string(R) + ", " + std::to_string(D) + "], got " +
                features.shape.str());
  if (cache.batch() != B || cache.dtype() != base_.options().kv || cache.slots() < batch.kv_len())
    throw Error(path_ + ": KV cache does not match the drafter");
  const TensorView e = embedded_.view().rows(0, R), x = act_.x.view().rows(0, R), xn = act_.xn.view().rows(0, R);
  const TensorView out = out_.view().rows(0, R), logits = logits_.view().rows(0, R);

  // Every batch row reads the same tokens (one dispatch); each has its own features.
  ops::embedding(s, base_.token_embeddings(), batch.token_ids().rows(0, T), e);
  if (embed_norm_.valid()) ops::rms_norm(s, e, embed_norm_, e, cfg_.norm_eps);
  ops::matmul(s, e, fc_embedding_, x);
  ops::MatmulFusion add_features;
  add_features.accumulate = true;
  add_features.y_scratch = xn;
  ops::matmul_fused(s, features, fc_feature_, x, add_features);
  ops::bias_act(s, x, fc_bias_.view(), x, ops::Activation::None);

  // Layer 0 has no attention norm (EAGLE: its q|k|v read x itself).
  const GptBlockForward blocks{cfg_, act_, rope_table_, attn_ws_, batch, R, cache};
  for (int64_t l = 0; l < cfg_.n_layer; ++l) record_gpt_block(s, layers_[static_cast<size_t>(l)], l, blocks);
  s.copy(x, out);
  base_.project(s, out, logits);
  return {logits, out};
}

}  // namespace vkspec
