#include "engine/model/latent_upsampler.h"

#include "common/error.h"
#include "engine/model/weights.h"
#include "engine/ops/codebook.h"
#include "engine/ops/conv2d.h"
#include "engine/ops/embedding.h"
#include "engine/ops/pixel_shuffle.h"
#include "engine/ops/swish.h"

namespace vkspec {
namespace {

constexpr MetaValue kContract[] = {{"activation", "silu"}, {"mask", "row_causal"}};

// The row-causal mask as stored: every tap on the kernel's bottom row (the input row below the
// output's) is exactly zero, else the upsampled band would read rows not drafted yet.
void check_row_causal(const SafetensorsFile& f, const std::string& name, int64_t cout, int64_t cin) {
  const std::vector<float> w = f.read_f32(name);
  for (int64_t o = 0; o < cout * cin; ++o)
    for (int64_t col = 0; col < 3; ++col)
      if (w[static_cast<size_t>(o * 9 + 2 * 3 + col)] != 0.0f)
        throw Error(f.path() + ": " + name + " has a non-zero tap on the row below (filter " + std::to_string(o) +
                    "): not row-causal");
}

}  // namespace

LatentUpsampler::LatentUpsampler(Context& ctx, const std::string& path, Tokenizer& tokenizer, int64_t max_low_grid,
                                 int64_t max_images)
    : path_(path), tokenizer_(tokenizer), max_low_(max_low_grid), max_images_(max_images) {
  if (max_low_grid < 1 || max_images < 1) throw Error(path + ": max_low_grid and max_images must be >= 1");
  WeightStore ws(ctx, path);
  const SafetensorsFile& f = ws.file();
  require_kind(f, path, "latent_upsampler", "a latent upsampler");
  require_meta_values(f, path, kContract);
  ratio_ = f.meta_int("ratio");
  channels_ = f.meta_int("channels");
  e_dim_ = f.meta_int("embed_dim");
  const int64_t vocab = f.meta_int("vocab_size"), depth = f.meta_int("depth");
  const Shape& cb = tokenizer.codebook().shape();
  if (vocab != tokenizer.codebook_size() || e_dim_ != cb[1])
    throw Error(path + ": trained for a codebook of " + std::to_string(vocab) + " x " + std::to_string(e_dim_) +
                ", the tokenizer " + tokenizer.path() + " has " + std::to_string(cb[0]) + " x " +
                std::to_string(cb[1]));
  if (ratio_ < 2 || ratio_ > 8 || channels_ < 1 || depth < 0)
    throw Error(path + ": ratio " + std::to_string(ratio_) + ", channels " + std::to_string(channels_) + ", depth " +
                std::to_string(depth));
  const std::string from = "channels=" + std::to_string(channels_) + ", depth=" + std::to_string(depth);
  embed_ = ws.load("embed.weight", {vocab, channels_}, DType::F32, from);
  auto conv = [&](const std::string& p, int64_t cout) {
    check_row_causal(f, p + ".weight", cout, channels_);
    convs_.push_back({ws.load(p + ".weight", {cout, channels_, 3, 3}, DType::F32, from),
                      ws.load(p + ".bias", {cout}, DType::F32, from)});
  };
  for (int64_t i = 0; i < depth; ++i) conv("convs." + std::to_string(i), channels_);
  conv("out", e_dim_ * ratio_ * ratio_);
  if (const auto unused = ws.unused(); !unused.empty())
    throw Error(path + ": unexpected tensor " + unused[0] + " (depth " + std::to_string(depth) + ")");
  const int64_t n = max_images, w = max_low_grid;
  for (Tensor& t : act_)
    t = ctx.tensor(DType::F32, {n, w, w, std::max(channels_, e_dim_ * ratio_ * ratio_)},
                   "latent upsampler activations");
  latents_ = ctx.tensor(DType::F32, {n, ratio_ * w, ratio_ * w, e_dim_}, "latent upsampler latents");
}

TensorView LatentUpsampler::record_latents(CommandStream& s, const TensorView& low, int64_t n, int64_t w) {
  if (n < 1 || n > max_images_ || w < 1 || w > max_low_)
    throw Error(path_ + ": " + std::to_string(n) + " images of " + std::to_string(w) + "x" + std::to_string(w) +
                " tokens; loaded for at most " + std::to_string(max_images_) + " of " + std::to_string(max_low_));
  if (low.numel() != n * w * w || (low.dtype != DType::U32 && low.dtype != DType::I32))
    throw Error(path_ + ": low-resolution ids must be u32 [" + std::to_string(n * w * w) + "], got " + low.shape.str());
  auto part = [](const Tensor& t, const Shape& shape) {
    return t.view().reshape({t.numel()}).rows(0, shape.numel()).reshape(shape);
  };
  TensorView x = part(act_[0], {n, w, w, channels_});
  ops::embedding(s, embed_.view(), low, x.reshape({n * w * w, channels_}));
  for (size_t i = 0; i < convs_.size(); ++i) {
    const bool last = i + 1 == convs_.size();
    const TensorView y = part(act_[(i + 1) % 2], {n, w, w, last ? e_dim_ * ratio_ * ratio_ : channels_});
    ops::conv2d(s, x, convs_[i].w.view(), convs_[i].b.view(), y, ops::Conv2dParams::same(3));
    if (!last) ops::swish(s, y, y);
    x = y;
  }
  const TensorView z = part(latents_, {n, ratio_ * w, ratio_ * w, e_dim_});
  ops::pixel_shuffle(s, x, z, ratio_);
  return z;
}

void LatentUpsampler::record(CommandStream& s, const TensorView& low, const TensorView& high, int64_t n, int64_t w) {
  const int64_t W = ratio_ * w;
  if (high.numel() != n * W * W || high.dtype != DType::U32)
    throw Error(path_ + ": high-resolution ids must be u32 [" + std::to_string(n * W * W) + "], got " +
                high.shape.str());
  const TensorView z = record_latents(s, low, n, w);
  ops::codebook_quantize(s, z, tokenizer_.codebook().view(), high);
}

}  // namespace vkspec
