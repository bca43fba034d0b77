#include "engine/model/t5_encoder.h"

#include <cmath>
#include <limits>

#include "common/error.h"
#include "engine/model/text_table.h"
#include "engine/model/weights.h"
#include "engine/ops/biased_attention.h"
#include "engine/ops/matmul.h"
#include "engine/ops/rms_norm.h"
#include "engine/ops/swiglu.h"
#include "engine/vk/command_stream.h"

namespace vkspec {

struct T5Encoder::Layer {
  Tensor attention_norm, wqkv, wo, ffn_norm, wi, wo_ffn;
};

namespace {
constexpr MetaValue kContract[] = {{"feed_forward_proj", "gated-gelu"}};
}  // namespace

T5Config T5Config::from_file(const SafetensorsFile& f) {
  T5Config c;
  c.d_model = f.meta_int("d_model");
  c.n_layer = f.meta_int("n_layer");
  c.n_head = f.meta_int("n_head");
  c.d_kv = f.meta_int("d_kv");
  c.d_ff = f.meta_int("d_ff");
  c.vocab = f.meta_int("vocab_size");
  c.num_buckets = f.meta_int("num_buckets", 32);
  c.max_distance = f.meta_int("max_distance", 128);
  c.eps = static_cast<float>(f.meta_float("norm_eps", 1e-6));
  if (c.d_model <= 0 || c.n_layer <= 0 || c.n_head <= 0 || c.d_kv <= 0 || c.d_ff <= 0 || c.vocab <= 0 ||
      c.num_buckets < 4 || c.max_distance <= c.num_buckets / 4 || c.eps <= 0)
    throw Error(f.path() + ": metadata has a size out of range (d_model, n_layer, n_head, d_kv, d_ff, vocab_size, "
                           "num_buckets, max_distance, norm_eps)");
  if (c.d_model > 65536 || c.n_layer > 256 || c.d_ff > (1 << 20) || c.vocab > (1 << 24))
    throw Error(f.path() + ": metadata sizes implausibly large for a T5 encoder");
  return c;
}

int64_t t5_relative_bucket(int64_t relative, int64_t num_buckets, int64_t max_distance) {
  const int64_t half = num_buckets / 2, max_exact = half / 2;
  int64_t bucket = relative > 0 ? half : 0;
  const int64_t n = relative < 0 ? -relative : relative;
  if (n < max_exact) return bucket + n;
  // As torch: log of a float32 ratio, over a double constant taken as float32, truncated.
  const float ratio = static_cast<float>(n) / static_cast<float>(max_exact);
  const float scale = static_cast<float>(std::log(static_cast<double>(max_distance) / static_cast<double>(max_exact)));
  const float large = std::log(ratio) / scale * static_cast<float>(half - max_exact);
  return bucket + std::min<int64_t>(max_exact + static_cast<int64_t>(large), half - 1);
}

T5Encoder::T5Encoder(Context& ctx, const std::string& path, DType wt) : T5Encoder(ctx, SafetensorsFile(path), wt) {}

T5Encoder::T5Encoder(Context& ctx, SafetensorsFile file, DType wt) : ctx_(ctx), path_(file.path()) {
  WeightStore w(ctx, std::move(file));
  const std::string& path = path_;
  require_kind(w.file(), path, "t5_encoder", "a T5 encoder");
  require_meta_values(w.file(), path, kContract);
  cfg_ = T5Config::from_file(w.file());
  const int64_t D = cfg_.d_model, I = cfg_.inner(), F = cfg_.d_ff;
  const std::string from =
      "d_model=" + std::to_string(D) + ", heads x d_kv=" + std::to_string(I) + ", d_ff=" + std::to_string(F);
  w.host_tensor("token_embeddings.weight", {cfg_.vocab, D}, "vocab_size, d_model");
  file_ = w.shared_file();
  for (int64_t l = 0; l < cfg_.n_layer; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    Layer L;
    L.attention_norm = w.load(p + "attention_norm.weight", {D}, DType::F32, from);
    L.wqkv = w.load(p + "attention.wqkv.weight", {3 * I, D}, wt, from);
    L.wo = w.load(p + "attention.wo.weight", {D, I}, wt, from);
    L.ffn_norm = w.load(p + "ffn_norm.weight", {D}, DType::F32, from);
    L.wi = w.load(p + "feed_forward.wi.weight", {2 * F, D}, wt, from);
    L.wo_ffn = w.load(p + "feed_forward.wo.weight", {D, F}, wt, from);
    layers_.push_back(std::move(L));
  }
  final_norm_ = w.load("final_norm.weight", {D}, DType::F32, from);
  w.host_tensor("relative_attention_bias.weight", {cfg_.num_buckets, cfg_.n_head}, "num_buckets, n_head");
  bias_table_ = w.file().read_f32("relative_attention_bias.weight");
  const auto unused = w.unused();
  if (!unused.empty()) throw Error(path + ": tensors the T5 encoder does not use: " + unused[0]);
}

T5Encoder::~T5Encoder() = default;

std::vector<float> T5Encoder::position_bias(const std::vector<uint8_t>& mask) const {
  const int64_t T = static_cast<int64_t>(mask.size()), H = cfg_.n_head;
  std::vector<float> bias(static_cast<size_t>(H * T * T));
  const float hidden = std::numeric_limits<float>::lowest();  // Hugging Face's finfo(f32).min
  for (int64_t t = 0; t < T; ++t)
    for (int64_t j = 0; j < T; ++j) {
      const int64_t b = t5_relative_bucket(j - t, cfg_.num_buckets, cfg_.max_distance);
      for (int64_t h = 0; h < H; ++h)
        bias[static_cast<size_t>((h * T + t) * T + j)] =
            bias_table_[static_cast<size_t>(b * H + h)] + (mask[static_cast<size_t>(j)] ? 0.0f : hidden);
    }
  return bias;
}

std::vector<float> T5Encoder::encode(const std::vector<int32_t>& ids, const std::vector<uint8_t>& mask) {
  const int64_t T = static_cast<int64_t>(ids.size()), D = cfg_.d_model, I = cfg_.inner(), F = cfg_.d_ff;
  if (T < 1 || T > ops::kBiasedAttentionMaxTokens || mask.size() != ids.size())
    throw Error(path_ + ": encodes 1 to " + std::to_string(ops::kBiasedAttentionMaxTokens) +
                " ids with a mask of as many, got " + std::to_string(T) + " and " + std::to_string(mask.size()));
  const std::vector<float> rows = text_table_rows(*file_, "token_embeddings.weight", ids, path_);
  const std::vector<float> bias = position_bias(mask);
  Tensor tbias = ctx_.tensor(DType::F32, {cfg_.n_head, T, T}, "t5 position bias");
  ctx_.upload(tbias, bias.data(), bias.size() * 4);
  Tensor x = ctx_.tensor(DType::F32, {T, D}, "t5 residual"), xn = ctx_.tensor(DType::F32, {T, D}, "t5 normed");
  ctx_.upload(x, rows.data(), rows.size() * 4);
  Tensor qkv = ctx_.tensor(DType::F32, {T, 3 * I}, "t5 qkv"), attn = ctx_.tensor(DType::F32, {T, I}, "t5 attention");
  Tensor ffn_in = ctx_.tensor(DType::F32, {T, 2 * F}, "t5 wi out"), ffn_h = ctx_.tensor(DType::F32, {T, F}, "t5 gated");
  CommandStream s(ctx_);
  ops::MatmulFusion residual;  // x += y w^T
  residual.accumulate = true;
  residual.y_scratch = xn.view();
  for (const Layer& L : layers_) {
    ops::rms_norm(s, x.view(), L.attention_norm.view(), xn.view(), cfg_.eps);
    ops::matmul(s, xn.view(), L.wqkv, qkv.view());
    ops::biased_attention(s, ops::HeadRows::columns(qkv.view(), 0, cfg_.n_head, cfg_.d_kv),
                          ops::HeadRows::columns(qkv.view(), I, cfg_.n_head, cfg_.d_kv),
                          ops::HeadRows::columns(qkv.view(), 2 * I, cfg_.n_head, cfg_.d_kv), tbias.view(), attn.view());
    ops::matmul_fused(s, attn.view(), L.wo, x.view(), residual);
    ops::rms_norm(s, x.view(), L.ffn_norm.view(), xn.view(), cfg_.eps);
    ops::matmul(s, xn.view(), L.wi, ffn_in.view());
    ops::geglu_fused(s, ffn_in.view(), ffn_h.view());
    ops::matmul_fused(s, ffn_h.view(), L.wo_ffn, x.view(), residual);
  }
  ops::rms_norm(s, x.view(), final_norm_.view(), xn.view(), cfg_.eps);
  s.submit_and_wait();
  std::vector<float> out(static_cast<size_t>(T * D));
  ctx_.download(xn, out.data(), out.size() * 4);
  return out;
}

}  // namespace vkspec
