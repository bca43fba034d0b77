#include "engine/model/gpt.h"

#include "engine/model/gpt_block.h"

#include "engine/ops/attention.h"
#include "engine/ops/embedding.h"
#include "engine/ops/gelu.h"
#include "engine/ops/kv_write.h"
#include "engine/ops/matmul.h"
#include "engine/ops/rms_norm.h"
#include "engine/ops/rope.h"
#include "common/error.h"

namespace vkspec {

Gpt::Gpt(Context& ctx, const std::string& path, const GptOptions& options) : Gpt(ctx, SafetensorsFile(path), options) {}

Gpt::Gpt(Context& ctx, SafetensorsFile file, const GptOptions& options) : ctx_(ctx), path_(file.path()), opt_(options) {
  WeightStore w(ctx, std::move(file));
  cfg_ = GptConfig::from_file(w.file());
  if (opt_.batch_rows < 1 || opt_.batch_rows > kMaxBatchRows)
    throw Error(path_ + ": batch_rows must be in [1, " + std::to_string(kMaxBatchRows) + "], got " +
                std::to_string(opt_.batch_rows));
  if (opt_.max_queries < 1) throw Error(path_ + ": max_queries must be >= 1");
  const int64_t D = cfg_.dim, V = cfg_.vocab_size;
  const std::string from = "dim=" + std::to_string(D);
  const DType wt = opt_.weights;
  tok_embeddings_ = w.load("tok_embeddings.weight", {V, D}, wt, from + ", vocab_size=" + std::to_string(V));
  if (cfg_.model_type == ModelType::c2i)
    cls_embedding_ = w.load("cls_embedding.embedding_table.weight", {cfg_.num_classes + 1, D}, wt,
                            from + ", num_classes=" + std::to_string(cfg_.num_classes) + " (+1 null class)");
  norm_ = w.load("norm.weight", {D}, DType::F32, from);
  output_ = w.load("output.weight", {V, D}, wt, from + ", vocab_size=" + std::to_string(V));
  for (int64_t l = 0; l < cfg_.n_layer; ++l)
    layers_.push_back(load_gpt_block(ctx, w, "layers." + std::to_string(l) + ".", cfg_, wt));
  if (cfg_.model_type == ModelType::t2i) load_caption_embedder(w);
  const auto unused = w.unused();
  if (!unused.empty()) {
    std::string names;
    for (size_t i = 0; i < unused.size() && i < 5; ++i) names += (i ? ", " : "") + unused[i];
    throw Error(path_ + ": tensors the GPT does not use (wrong kind of model, or a renamed checkpoint?): " + names);
  }
  weight_bytes_ = w.uploaded_bytes();
  rope_table_ = ops::rope_2d_table(ctx, cfg_.head_dim, cfg_.grid_size, cfg_.rope_base);

  const int64_t R = opt_.batch_rows * opt_.max_queries;
  act_ = make_block_activations(ctx, R, cfg_, "gpt");
  logits_ = ctx.tensor(DType::F32, {R, V}, "gpt logits");
  ops::AttentionShape shape;
  shape.batch = opt_.batch_rows;  // workspace grows with the batch: size for the largest
  shape.tokens = opt_.max_queries;
  shape.heads = cfg_.n_head;
  shape.head_dim = cfg_.head_dim;
  // Room for the most splits any forward plans: one batch row per image (gpt_block.cpp).
  ops::AttentionOptions most_splits;
  most_splits.split_rows = 1;
  const uint64_t bytes = ops::attention_workspace_bytes_any_cache(ctx, shape, most_splits);
  attn_ws_ = ops::attention_workspace(ctx, std::max<uint64_t>(bytes, 4), "attention workspace");
}

void Gpt::load_caption_embedder(WeightStore& w) {
  const int64_t D = cfg_.dim, C = cfg_.caption_dim, N = cfg_.cls_token_num;
  const std::string from = "dim=" + std::to_string(D) + ", caption_dim=" + std::to_string(C);
  caption_fc1_ = w.load("cls_embedding.cap_proj.fc1.weight", {D, C}, opt_.weights, from);
  caption_fc2_ = w.load("cls_embedding.cap_proj.fc2.weight", {D, D}, opt_.weights, from);
  caption_hidden_ = ctx_.tensor(DType::F32, {std::max(opt_.max_queries, N), D}, "gpt caption hidden");
  // LlamaGen's null caption has 120 rows whatever cls_token_num is; the model reads the first
  // cls_token_num. It never changes, so its MLP output is computed once here.
  const std::string name = "cls_embedding.uncond_embedding";
  if (!w.file().has(name)) throw Error(path_ + ": tensor " + name + " missing (the null caption of a t2i model)");
  const StTensorInfo& info = w.file().info(name);
  if (info.shape.size() != 2 || info.shape[0] < N || info.shape[1] != C)
    throw Error(path_ + ": tensor " + name + " has shape " + info.shape_str() + ", expected [>= " + std::to_string(N) +
                ", " + std::to_string(C) + "] (cls_token_num, caption_dim)");
  Tensor uncond = w.load(name, Shape{info.shape[0], info.shape[1]}, DType::F32, from);
  null_caption_ = ctx_.tensor(DType::F32, {N, D}, "gpt null caption");
  CommandStream s(ctx_);
  embed_caption(s, uncond.view().rows(0, N), caption_hidden_.view().rows(0, N), null_caption_.view());
  s.submit_and_wait();
}

void Gpt::embed_caption(CommandStream& s, const TensorView& caption, const TensorView& hidden, const TensorView& y) {
  ops::matmul(s, caption, caption_fc1_, hidden);
  ops::gelu_tanh(s, hidden, hidden);
  ops::matmul(s, hidden, caption_fc2_, y);
}

KvCache Gpt::make_cache(int64_t scratch, int64_t batch_rows) const {
  if (batch_rows == 0) batch_rows = opt_.batch_rows;
  if (batch_rows < 1 || batch_rows > opt_.batch_rows)
    throw Error(path_ + ": a KV cache for " + std::to_string(batch_rows) + " batch rows, model built for at most " +
                std::to_string(opt_.batch_rows));
  return KvCache(ctx_, cfg_, batch_rows, cfg_.seq_len() + scratch, opt_.kv);
}

GptOutputs Gpt::forward(CommandStream& s, const GptBatch& batch, const KvCache& cache) {
  const int64_t B = batch.batch_rows(), T = batch.tokens_per_row(), n_cond = batch.condition_queries();
  if (B < 1 || B > opt_.batch_rows)
    throw Error(path_ + ": batch has " + std::to_string(B) + " rows, model built for at most " +
                std::to_string(opt_.batch_rows));
  if (T > opt_.max_queries)
    throw Error(path_ + ": " + std::to_string(T) + " queries exceed max_queries " + std::to_string(opt_.max_queries));
  if (cache.batch() != B || cache.dtype() != opt_.kv || cache.slots() < batch.kv_len())
    throw Error(path_ + ": KV cache does not match the model");
  const int64_t R = B * T;
  const TensorView x = act_.x.view().rows(0, R), xn = act_.xn.view().rows(0, R), logits = logits_.view().rows(0, R);

  // Embeddings: each batch row's condition queries embed its condition, the rest its image's token
  // ids (without condition queries, as in every decoding step, every row in one dispatch: row
  // b * T + t reads id (b % images) * T + t, embedding's rows modulo the ids).
  const int64_t G = batch.images();
  if (n_cond == 0) ops::embedding(s, tok_embeddings_, batch.token_ids().rows(0, G * T), x);
  for (int64_t b = 0; b < B && n_cond > 0; ++b) {
    const int64_t n = batch.condition_queries(b % G);  // 0 for an image past its first step (ragged)
    if (n == 0) {
      ops::embedding(s, tok_embeddings_, batch.token_ids().rows(batch.token_offset(b % G), T), x.rows(b * T, T));
      continue;
    }
    const TensorView cond_rows = x.rows(b * T, n_cond);
    if (cfg_.model_type == ModelType::c2i) {
      ops::embedding(s, cls_embedding_, batch.label_ids(b), cond_rows);
    } else if (batch.null_condition(b)) {
      ops::embedding(s, null_caption_, batch.condition_positions(), cond_rows);
    } else {
      embed_caption(s, batch.caption_values(b), caption_hidden_.view().rows(0, n_cond), cond_rows);
    }
    if (T > n_cond) {
      TensorView ids = batch.token_ids().rows(batch.token_offset(b % G), T - n_cond);
      ops::embedding(s, tok_embeddings_, ids, x.rows(b * T + n_cond, T - n_cond));
    }
  }
  for (int64_t l = 0; l < cfg_.n_layer; ++l)
    record_gpt_block(s, layers_[static_cast<size_t>(l)], cfg_, l, act_, R, batch, cache, rope_table_, attn_ws_);
  ops::rms_norm(s, x, norm_, xn, cfg_.norm_eps);
  ops::MatmulFusion per_image;  // the head's kernel as for one image's rows (gpt_block.cpp)
  per_image.rows_per_image = R / G;
  ops::matmul_fused(s, xn, output_, logits, per_image);
  return {logits, xn};
}

}  // namespace vkspec
