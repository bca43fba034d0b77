#include "engine/model/gpt_block.h"

#include "engine/ops/attention.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/head_layer_norm.h"
#include "engine/ops/kv_write.h"
#include "engine/ops/rms_norm.h"
#include "engine/ops/matmul.h"
#include "engine/ops/rope.h"
#include "engine/vk/command_stream.h"

namespace vkspec {

GptBlockWeights load_gpt_block(Context& ctx, WeightStore& w, const std::string& p, const GptConfig& cfg, DType wt,
                               bool attention_norm) {
  const int64_t D = cfg.dim, H = cfg.ffn_hidden;
  const std::string from = "dim=" + std::to_string(D), hf = "ffn hidden=" + std::to_string(H);
  GptBlockWeights L;
  if (attention_norm) L.attention_norm = w.load(p + "attention_norm.weight", {D}, DType::F32, from);
  L.ffn_norm = w.load(p + "ffn_norm.weight", {D}, DType::F32, from);
  L.wqkv = w.load(p + "attention.wqkv.weight", {3 * D, D}, wt, from);
  L.wo = w.load(p + "attention.wo.weight", {D, D}, wt, from);
  Tensor w1 = w.load(p + "feed_forward.w1.weight", {H, D}, wt, hf);
  Tensor w3 = w.load(p + "feed_forward.w3.weight", {H, D}, wt, hf);
  L.w2 = w.load(p + "feed_forward.w2.weight", {D, H}, wt, hf);
  if (cfg.qk_norm_groups > 0) {
    const int64_t G = cfg.qk_norm_groups, hd = cfg.head_dim;
    const std::string qk = "qk_norm_groups=" + std::to_string(G) + ", head_dim=" + std::to_string(hd);
    L.qk_norm_weight = ctx.tensor(DType::F32, {2 * G, hd}, p + "attention.q|k_norm.weight");
    L.qk_norm_bias = ctx.tensor(DType::F32, {2 * G, hd}, p + "attention.q|k_norm.bias");
    for (const auto& [x, at] : {std::pair<const char*, int64_t>{"q", 0}, {"k", G}}) {
      CommandStream norms(ctx);
      const Tensor weight = w.load(p + "attention." + x + "_norm.weight", {G, hd}, DType::F32, qk);
      const Tensor bias = w.load(p + "attention." + x + "_norm.bias", {G, hd}, DType::F32, qk);
      norms.copy(weight.view(), L.qk_norm_weight.view().rows(at, G));
      norms.copy(bias.view(), L.qk_norm_bias.view().rows(at, G));
      norms.submit_and_wait();
    }
  }
  L.w13 = ctx.tensor(wt, {2 * H, D}, p + "feed_forward.w1|w3");
  CommandStream copies(ctx);
  copies.copy(w1.view(), L.w13.view().rows(0, H));
  copies.copy(w3.view(), L.w13.view().rows(H, H));
  copies.submit_and_wait();
  return L;
}

Tensor make_rope_table(Context& ctx, const GptConfig& cfg) {
  return cfg.rope_layout == RopeLayout::grid_2d
             ? ops::rope_2d_table(ctx, cfg.head_dim, cfg.rope_table_rows(), cfg.rope_base)
             : ops::rope_1d_table(ctx, cfg.head_dim, cfg.rope_table_rows(), cfg.rope_base);
}

Tensor make_attention_workspace(Context& ctx, const GptConfig& cfg, int64_t batch_rows, int64_t queries,
                                const std::string& owner) {
  ops::AttentionShape shape;
  shape.batch = batch_rows;  // the workspace grows with the batch: sized for the largest
  shape.tokens = queries;
  shape.heads = cfg.n_head;
  shape.head_dim = cfg.head_dim;
  ops::AttentionOptions most_splits;
  most_splits.split_rows = 1;
  const uint64_t bytes = ops::attention_workspace_bytes_any_cache(ctx, shape, most_splits);
  return ops::attention_workspace(ctx, std::max<uint64_t>(bytes, 4), owner + " attention workspace");
}

GptBlockActivations make_block_activations(Context& ctx, int64_t rows, const GptConfig& cfg, const std::string& owner) {
  const int64_t D = cfg.dim, H = cfg.ffn_hidden;
  GptBlockActivations a;
  a.x = ctx.tensor(DType::F32, {rows, D}, owner + " residual");
  a.xn = ctx.tensor(DType::F32, {rows, D}, owner + " normed");
  a.qkv = ctx.tensor(DType::F32, {rows, 3 * D}, owner + " qkv");
  a.attn = ctx.tensor(DType::F32, {rows, D}, owner + " attention out");
  a.ffn_in = ctx.tensor(DType::F32, {rows, 2 * H}, owner + " ffn w1|w3 out");
  a.ffn_hidden = ctx.tensor(DType::F32, {rows, H}, owner + " ffn hidden");
  return a;
}

namespace {

// q|k|v of the forward's rows and their RoPE and cache write: folded into the projection, or
// where the block normalises q and k (Chameleon) the projection, both norms, then RoPE and the
// write in one dispatch.
void record_qkv(CommandStream& s, const GptBlockWeights& L, int64_t l, const GptBlockForward& f,
                const ops::MatmulFusion& attention_in) {
  const GptConfig& cfg = f.cfg;
  const int64_t nh = cfg.n_head, hd = cfg.head_dim, D = cfg.dim, B = f.batch.batch_rows();
  const TensorView x = f.act.x.view().rows(0, f.rows), qkv = f.act.qkv.view().rows(0, f.rows);
  const ops::MatmulFusion::RopeKv rope_kv{
      nh, hd, B, f.batch.rope_positions(), f.rope_table.view(), f.batch.slots(), f.cache.k(l), f.cache.v(l)};
  if (!L.qk_norm_weight.valid()) {
    ops::MatmulFusion fused = attention_in;
    fused.rope_kv = rope_kv;
    ops::matmul_fused(s, x, L.wqkv, qkv, fused);
    return;
  }
  ops::matmul_fused(s, x, L.wqkv, qkv, attention_in);
  ops::head_layer_norm(s, ops::HeadRows::columns(qkv, 0, 2 * nh, hd), L.qk_norm_weight.view(), L.qk_norm_bias.view(),
                       cfg.qk_norm_eps);
  ops::Rope2dKvWrite a;
  a.q = ops::HeadRows::columns(qkv, 0, nh, hd);
  a.k = ops::HeadRows::columns(qkv, D, nh, hd);
  a.v = ops::HeadRows::columns(qkv, 2 * D, nh, hd);
  a.batch = B;
  a.positions = rope_kv.positions;
  a.table = rope_kv.table;
  a.slots = rope_kv.slots;
  a.k_cache = rope_kv.k_cache;
  a.v_cache = rope_kv.v_cache;
  ops::rope_2d_kv_write(s, a);
}

// x += norm(in w^T) (the Swin placement's residual branch), through the activations' scratch.
void add_normed(CommandStream& s, const TensorView& in, const Tensor& w, const Tensor& norm, const TensorView& x,
                const GptBlockForward& f, int64_t rows_per_image, bool swiglu) {
  const TensorView y = f.act.xn.view().rows(0, f.rows), normed = f.act.attn.view().rows(0, f.rows);
  ops::MatmulFusion product;
  product.rows_per_image = rows_per_image;
  product.swiglu = swiglu;
  product.x_scratch = f.act.ffn_hidden.view().rows(0, f.rows);
  ops::matmul_fused(s, in, w, y, product);
  ops::rms_norm(s, y, norm, normed, f.cfg.norm_eps);
  ops::add(s, x, normed, x);
}

}  // namespace

void record_gpt_block(CommandStream& s, const GptBlockWeights& L, int64_t l, const GptBlockForward& f) {
  const GptConfig& cfg = f.cfg;
  const GptBlockActivations& a = f.act;
  const GptBatch& batch = f.batch;
  const KvCache& cache = f.cache;
  const int64_t R = f.rows;
  const int64_t nh = cfg.n_head, hd = cfg.head_dim, B = batch.batch_rows();
  const TensorView x = a.x.view().rows(0, R), xn = a.xn.view().rows(0, R), qkv = a.qkv.view().rows(0, R);
  const TensorView attn = a.attn.view().rows(0, R), ffn_in = a.ffn_in.view().rows(0, R);
  const TensorView ffn_hidden = a.ffn_hidden.view().rows(0, R);
  const ops::HeadRows q = ops::HeadRows::columns(qkv, 0, nh, hd);
  // Each norm rides in the projection after it and each residual add in the one before it, where
  // the kernel folds them (ops::MatmulFusion), and so do RoPE and the cache write in the q|k|v
  // projection; xn holds what a kernel that does not fold needs.
  // Every projection picks its kernel for one image's rows as the strategy plans them: a row's
  // bits depend neither on the images beside it nor on how many queries this forward runs.
  const int64_t rows_per_image = batch.plan_rows_per_image();
  ops::MatmulFusion attention_in;
  attention_in.rows_per_image = rows_per_image;
  if (L.attention_norm.valid() && !cfg.swin_norm) attention_in.norm_weight = L.attention_norm.view();
  attention_in.norm_eps = cfg.norm_eps;
  attention_in.x_scratch = xn;
  record_qkv(s, L, l, f, attention_in);
  ops::AttentionOptions per_image;  // the split one image's rows would take: batch-invariant sums
  per_image.split_rows = B / batch.images();
  per_image.split_slots = cache.sequence_device_slots();
  per_image.plan_tokens = batch.plan_queries();
  ops::Attention att;
  att.q = q;
  att.batch = B;
  att.k_cache = cache.k(l);
  att.v_cache = cache.v(l);
  att.kv_len = batch.kv_len();
  att.mask = batch.mask();
  att.out = attn;
  att.workspace = f.attn_ws;
  ops::attention(s, att, per_image);
  if (cfg.swin_norm) {  // Chameleon-34B: x += norm(attention), x += norm(ffn(x))
    add_normed(s, attn, L.wo, L.attention_norm, x, f, rows_per_image, false);
    ops::MatmulFusion ffn_in_plain = attention_in;
    ops::matmul_fused(s, x, L.w13, ffn_in, ffn_in_plain);
    add_normed(s, ffn_in, L.w2, L.ffn_norm, x, f, rows_per_image, true);
    return;
  }
  ops::MatmulFusion residual;
  residual.rows_per_image = rows_per_image;
  residual.accumulate = true;
  residual.y_scratch = xn;
  ops::matmul_fused(s, attn, L.wo, x, residual);
  ops::MatmulFusion ffn_in_fusion = attention_in;
  ffn_in_fusion.norm_weight = L.ffn_norm.view();
  ops::matmul_fused(s, x, L.w13, ffn_in, ffn_in_fusion);
  ops::MatmulFusion ffn_out = residual;
  ffn_out.swiglu = true;
  ffn_out.x_scratch = ffn_hidden;
  ops::matmul_fused(s, ffn_in, L.w2, x, ffn_out);
}

}  // namespace vkspec
