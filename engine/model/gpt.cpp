#include "engine/model/gpt.h"

#include <algorithm>
#include <filesystem>

#include "engine/model/gpt_block.h"
#include "engine/model/line_breaks.h"
#include "engine/model/model_family.h"

#include "engine/ops/attention.h"
#include "engine/ops/embedding.h"
#include "engine/ops/matmul.h"
#include "engine/ops/rms_norm.h"
#include "engine/ops/rope.h"
#include "common/error.h"

namespace vkspec {

Gpt::Gpt(Context& ctx, const std::string& path, const GptOptions& options) : Gpt(ctx, SafetensorsFile(path), options) {}

Gpt::Gpt(Context& ctx, SafetensorsFile file, const GptOptions& options) : ctx_(ctx), path_(file.path()), opt_(options) {
  WeightStore w(ctx, std::move(file));
  const ModelFamilyDescriptor& family = model_family_of(w.file());
  cfg_ = family.config(w.file());
  if (w.file().has_meta("vq"))  // a converted model names its VQ decoder, a file beside it
    cfg_.vq_file = (std::filesystem::path(path_).parent_path() / w.file().meta("vq")).string();
  if (opt_.batch_rows < 1 || opt_.batch_rows > kMaxBatchRows)
    throw Error(path_ + ": batch_rows must be in [1, " + std::to_string(kMaxBatchRows) + "], got " +
                std::to_string(opt_.batch_rows));
  if (opt_.max_queries < 1) throw Error(path_ + ": max_queries must be >= 1");
  const int64_t D = cfg_.dim, V = cfg_.vocab_size;
  parts_ = family.make(ctx, w, cfg_, opt_);
  head_ = family.make_head(ctx, w, cfg_, opt_, "");
  norm_ = w.load("norm.weight", {D}, DType::F32, "dim=" + std::to_string(D));
  for (int64_t l = 0; l < cfg_.n_layer; ++l)
    layers_.push_back(load_gpt_block(ctx, w, "layers." + std::to_string(l) + ".", cfg_, opt_.weights));
  std::vector<std::string> unused;
  for (const std::string& name : w.unused())
    if (std::none_of(opt_.companion_prefixes.begin(), opt_.companion_prefixes.end(),
                     [&](const std::string& p) { return name.rfind(p, 0) == 0; }))
      unused.push_back(name);
  if (!unused.empty()) {
    std::string names;
    for (size_t i = 0; i < unused.size() && i < 5; ++i) names += (i ? ", " : "") + unused[i];
    throw Error(path_ + ": tensors the GPT (" + cfg_.family +
                ") does not use (wrong kind of model, or a renamed checkpoint?): " + names);
  }
  weight_bytes_ = w.uploaded_bytes();
  rope_table_ = make_rope_table(ctx, cfg_);

  const int64_t R = opt_.batch_rows * opt_.max_queries;
  act_ = make_block_activations(ctx, opt_.batch_rows * placed_queries(), cfg_, "gpt");
  logits_ = ctx.tensor(DType::F32, {R, V}, "gpt logits");
  if (cfg_.line_breaks) hidden_ = ctx.tensor(DType::F32, {R, D}, "gpt hidden (the method's rows)");
  attn_ws_ = make_attention_workspace(ctx, cfg_, opt_.batch_rows, placed_queries(), "gpt");
}

KvCache Gpt::make_cache(int64_t scratch, int64_t batch_rows) const {
  if (batch_rows == 0) batch_rows = opt_.batch_rows;
  if (batch_rows < 1 || batch_rows > opt_.batch_rows)
    throw Error(path_ + ": a KV cache for " + std::to_string(batch_rows) + " batch rows, model built for at most " +
                std::to_string(opt_.batch_rows));
  return KvCache(ctx_, cfg_, batch_rows, cfg_.seq_len() + scratch, opt_.kv);
}

// Each batch row's condition queries embed its condition (the family's parts), the rest its
// image's token ids (without condition queries, as in every decoding step, every row in one
// dispatch: row b * T + t reads id (b % images) * T + t, embedding's rows modulo the ids).
void Gpt::embed(CommandStream& s, const GptBatch& batch, const TensorView& x) {
  const int64_t B = batch.batch_rows(), T = batch.tokens_per_row(), n_cond = batch.condition_queries();
  const int64_t G = batch.images();
  const Tensor& table = parts_->token_embeddings();
  if (n_cond == 0) ops::embedding(s, table, batch.token_ids().rows(0, G * T), x);
  for (int64_t b = 0; b < B && n_cond > 0; ++b) {
    const int64_t n = batch.condition_queries(b % G);  // 0 for an image past its first step (ragged)
    if (n == 0) {
      ops::embedding(s, table, batch.token_ids().rows(batch.token_offset(b % G), T), x.rows(b * T, T));
      continue;
    }
    parts_->embed_condition(s, batch, b, x.rows(b * T, n_cond));
    if (T > n_cond) {
      TensorView ids = batch.token_ids().rows(batch.token_offset(b % G), T - n_cond);
      ops::embedding(s, table, ids, x.rows(b * T + n_cond, T - n_cond));
    }
  }
}

// With placed line breaks, the method's ids copied into the placed batch's, within the stream
// (strategies write sampled ids into theirs as it runs).
void copy_placed_ids(CommandStream& s, const GptBatch& batch, const GptBatch& placed) {
  for (const PlacedQueries::Run& r : batch.placed_runs()->ids)
    s.copy(batch.token_ids().rows(r.from, r.count), placed.token_ids().rows(r.to, r.count));
}

GptOutputs Gpt::forward(CommandStream& s, const GptBatch& batch, const KvCache& cache, const GptTap& tap) {
  const int64_t B = batch.batch_rows(), T = batch.tokens_per_row();
  if (B < 1 || B > opt_.batch_rows)
    throw Error(path_ + ": batch has " + std::to_string(B) + " rows, model built for at most " +
                std::to_string(opt_.batch_rows));
  if (T > opt_.max_queries)
    throw Error(path_ + ": " + std::to_string(T) + " queries exceed max_queries " + std::to_string(opt_.max_queries));
  if (cache.batch() != B || cache.dtype() != opt_.kv || cache.slots() < batch.kv_len())
    throw Error(path_ + ": KV cache does not match the model");
  const GptBatch& run = batch.placed(cache);  // the batch itself but with placed line breaks
  const int64_t R = B * T, Rp = B * run.tokens_per_row();
  if (run.tokens_per_row() > placed_queries())
    throw Error(path_ + ": " + std::to_string(run.tokens_per_row()) + " queries with their line breaks exceed " +
                std::to_string(placed_queries()));
  const TensorView x = act_.x.view().rows(0, Rp), xn = act_.xn.view().rows(0, Rp), logits = logits_.view().rows(0, R);
  if (tap.layer >= 0) {
    if (tap.layer > cfg_.n_layer || tap.into.shape.rank != 2 || tap.into.shape[0] < Rp ||
        tap.into.shape[1] != cfg_.dim || tap.into.dtype != DType::F32)
      throw Error(path_ + ": a tap of the residual entering block " + std::to_string(tap.layer) + " takes f32 [>= " +
                  std::to_string(Rp) + ", " + std::to_string(cfg_.dim) + "], got " + tap.into.shape.str());
  }
  if (&run != &batch) copy_placed_ids(s, batch, run);
  embed(s, run, x);
  const GptBlockForward blocks{cfg_, act_, rope_table_, attn_ws_, run, Rp, cache};
  for (int64_t l = 0; l < cfg_.n_layer; ++l) {
    if (l == tap.layer) s.copy(x, tap.into.rows(0, Rp));
    record_gpt_block(s, layers_[static_cast<size_t>(l)], l, blocks);
  }
  if (tap.layer == cfg_.n_layer) s.copy(x, tap.into.rows(0, Rp));
  ops::rms_norm(s, x, norm_, xn, cfg_.norm_eps);
  TensorView hidden = xn;
  if (&run != &batch) {  // each method query's state: its own, or the break's placed after it
    hidden = hidden_.view().rows(0, R);
    for (const PlacedQueries::Run& r : batch.placed_runs()->rows)
      s.copy(xn.rows(r.from, r.count), hidden.rows(r.to, r.count));
  }
  ops::MatmulFusion per_image;  // the head's kernel as for one image's planned rows (gpt_block.cpp)
  per_image.rows_per_image = batch.plan_rows_per_image();
  head_->record(s, hidden, logits, per_image);
  return {logits, hidden};
}

void Gpt::project(CommandStream& s, const TensorView& hidden, const TensorView& logits) const {
  if (hidden.shape.rank != 2 || hidden.shape[1] != cfg_.dim || logits.shape.rank != 2 ||
      logits.shape[0] != hidden.shape[0] || logits.shape[1] != cfg_.vocab_size)
    throw Error(path_ + ": the image head maps [R, " + std::to_string(cfg_.dim) + "] to [R, " +
                std::to_string(cfg_.vocab_size) + "], got " + hidden.shape.str() + " -> " + logits.shape.str());
  head_->record(s, hidden, logits, {});
}

}  // namespace vkspec
