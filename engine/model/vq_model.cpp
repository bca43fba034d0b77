#include "engine/model/vq_model.h"

#include <algorithm>

#include "engine/ops/codebook.h"
#include "engine/ops/conv2d.h"
#include "engine/ops/embedding.h"
#include "engine/ops/group_norm.h"
#include "engine/ops/spatial_attention.h"
#include "engine/ops/upsample.h"
#include "common/error.h"

namespace vkspec {
namespace {

constexpr int kPool = 6;  // x, block temporaries, attention q/k/v/out

}  // namespace

VqConfig VqConfig::from_file(const SafetensorsFile& f) {
  if (f.has_meta("vkspec.kind") && f.meta("vkspec.kind") != "vq")
    throw Error(f.path() + ": is a '" + f.meta("vkspec.kind") + "' model, not a VQ tokenizer");
  VqConfig c;
  c.ch = f.meta_int("ch");
  c.ch_mult = f.meta_int_list("ch_mult");
  c.decoder_ch_mult = f.has_meta("decoder_ch_mult") ? f.meta_int_list("decoder_ch_mult") : c.ch_mult;
  c.z_channels = f.meta_int("z_channels");
  c.codebook_size = f.meta_int("codebook_size");
  c.codebook_embed_dim = f.meta_int("codebook_embed_dim");
  c.num_res_blocks = f.meta_int("num_res_blocks", 2);
  c.in_channels = f.meta_int("in_channels", 3);
  c.out_channels = f.meta_int("out_channels", c.in_channels);
  c.codebook_l2_norm = f.meta_int("codebook_l2_norm", 1) != 0;
  c.level_attention = f.meta_int("level_attention", 1) != 0;
  auto bad = [&](const std::string& what) { return Error(f.path() + ": VQ metadata: " + what); };
  if (c.ch <= 0 || c.ch % 32) throw bad("ch must be a positive multiple of 32 (GroupNorm with 32 groups)");
  if (c.ch_mult.empty() || c.ch_mult.size() > 8 || c.decoder_ch_mult.size() != c.ch_mult.size())
    throw bad("ch_mult must list 1 to 8 levels, the same count for the decoder");
  for (int64_t m : c.ch_mult)
    if (m <= 0 || m > 64) throw bad("ch_mult entries must be in [1, 64]");
  for (int64_t m : c.decoder_ch_mult)
    if (m <= 0 || m > 64) throw bad("decoder_ch_mult entries must be in [1, 64]");
  if (c.z_channels <= 0 || c.z_channels % 32) throw bad("z_channels must be a positive multiple of 32");
  const int64_t max_embed = c.codebook_l2_norm ? 64 : 4096;  // the cosine search's limit; a raw lookup's
  if (c.codebook_size <= 0 || c.codebook_embed_dim <= 0 || c.codebook_embed_dim > max_embed)
    throw bad("codebook_size must be positive and codebook_embed_dim in [1, " + std::to_string(max_embed) + "]");
  if (c.num_res_blocks <= 0 || c.num_res_blocks > 8) throw bad("num_res_blocks must be in [1, 8]");
  if (c.in_channels <= 0 || c.in_channels > 4 || c.out_channels <= 0 || c.out_channels > 4)
    throw bad("image channels must be in [1, 4]");
  return c;
}

VqModel::Conv VqModel::load_conv(WeightStore& ws, const std::string& name, int64_t cout, int64_t cin, int64_t k) {
  Conv c;
  c.w = ws.load(name + ".weight", {cout, cin, k, k}, wt_);
  c.b = ws.load(name + ".bias", {cout}, DType::F32);
  return c;
}

VqModel::Norm VqModel::load_norm(WeightStore& ws, const std::string& name, int64_t c) {
  return {ws.load(name + ".weight", {c}, DType::F32), ws.load(name + ".bias", {c}, DType::F32)};
}

VqModel::Res VqModel::load_res(WeightStore& ws, const std::string& name, int64_t cin, int64_t cout) {
  Res r;
  r.cin = cin;
  r.cout = cout;
  r.norm1 = load_norm(ws, name + ".norm1", cin);
  r.conv1 = load_conv(ws, name + ".conv1", cout, cin, 3);
  r.norm2 = load_norm(ws, name + ".norm2", cout);
  r.conv2 = load_conv(ws, name + ".conv2", cout, cout, 3);
  if (cin != cout) r.nin = load_conv(ws, name + ".nin_shortcut", cout, cin, 1);
  return r;
}

VqModel::Attn VqModel::load_attn(WeightStore& ws, const std::string& name, int64_t c) {
  Attn a;
  a.c = c;
  a.norm = load_norm(ws, name + ".norm", c);
  a.q = load_conv(ws, name + ".q", c, c, 1);
  a.k = load_conv(ws, name + ".k", c, c, 1);
  a.v = load_conv(ws, name + ".v", c, c, 1);
  a.proj = load_conv(ws, name + ".proj_out", c, c, 1);
  return a;
}

int64_t VqModel::load_encoder(WeightStore& ws, int64_t top) {
  const int64_t L = static_cast<int64_t>(cfg_.ch_mult.size()), ch = cfg_.ch, nres = cfg_.num_res_blocks;
  const auto& em = cfg_.ch_mult;
  enc_.conv_in = load_conv(ws, "encoder.conv_in", ch, cfg_.in_channels, 3);
  int64_t cin = ch, side = top;
  int64_t per_image = side * side * ch;
  for (int64_t i = 0; i < L; ++i) {
    Level lv;
    const std::string p = "encoder.conv_blocks." + std::to_string(i);
    const int64_t cout = ch * em[static_cast<size_t>(i)];
    for (int64_t j = 0; j < nres; ++j) {
      lv.res.push_back(load_res(ws, p + ".res." + std::to_string(j), cin, cout));
      cin = cout;
      if (i == L - 1 && cfg_.level_attention) lv.attn.push_back(load_attn(ws, p + ".attn." + std::to_string(j), cout));
    }
    per_image = std::max(per_image, side * side * cout);
    if (i != L - 1) {
      lv.resample = load_conv(ws, p + ".downsample.conv", cout, cout, 3);
      side /= 2;
    }
    enc_.levels.push_back(std::move(lv));
  }
  enc_.mid0 = load_res(ws, "encoder.mid.0", cin, cin);
  enc_.mid1 = load_attn(ws, "encoder.mid.1", cin);
  enc_.mid2 = load_res(ws, "encoder.mid.2", cin, cin);
  enc_.norm_out = load_norm(ws, "encoder.norm_out", cin);
  enc_.conv_out = load_conv(ws, "encoder.conv_out", cfg_.z_channels, cin, 3);
  return per_image;
}

int64_t VqModel::load_decoder(WeightStore& ws, int64_t g) {
  const int64_t L = static_cast<int64_t>(cfg_.ch_mult.size()), ch = cfg_.ch, nres = cfg_.num_res_blocks;
  const auto& dm = cfg_.decoder_ch_mult;
  int64_t cin = ch * dm.back(), side = g;
  dec_.conv_in = load_conv(ws, "decoder.conv_in", cin, cfg_.z_channels, 3);
  dec_.mid0 = load_res(ws, "decoder.mid.0", cin, cin);
  dec_.mid1 = load_attn(ws, "decoder.mid.1", cin);
  dec_.mid2 = load_res(ws, "decoder.mid.2", cin, cin);
  int64_t per_image = side * side * cin;
  for (int64_t i = 0; i < L; ++i) {
    Level lv;
    // LlamaGen walks the decoder's levels from the deepest: conv_blocks[i] is level L - 1 - i.
    const std::string p = "decoder.conv_blocks." + std::to_string(i);
    const int64_t cout = ch * dm[static_cast<size_t>(L - 1 - i)];
    for (int64_t j = 0; j < nres + 1; ++j) {
      lv.res.push_back(load_res(ws, p + ".res." + std::to_string(j), cin, cout));
      cin = cout;
      if (i == 0 && cfg_.level_attention) lv.attn.push_back(load_attn(ws, p + ".attn." + std::to_string(j), cout));
    }
    per_image = std::max(per_image, side * side * cout);
    if (i != L - 1) {
      lv.resample = load_conv(ws, p + ".upsample.conv", cout, cout, 3);
      side *= 2;
      per_image = std::max(per_image, side * side * cout);
    }
    dec_.levels.push_back(std::move(lv));
  }
  dec_.norm_out = load_norm(ws, "decoder.norm_out", cin);
  dec_.conv_out = load_conv(ws, "decoder.conv_out", cfg_.out_channels, cin, 3);
  return per_image;
}

VqModel::VqModel(Context& ctx, const std::string& path, DType weights, int64_t max_images, int64_t max_grid)
    : ctx_(ctx), path_(path), wt_(weights), max_images_(max_images), max_grid_(max_grid) {
  WeightStore ws(ctx, path);
  cfg_ = VqConfig::from_file(ws.file());
  if (max_images < 1 || max_grid < 1) throw Error(path + ": max_images and max_grid must be >= 1");
  // Largest activation of one image, walking both directions: (side, channels) of every stage.
  const int64_t g = max_grid, top = g * cfg_.downsample();
  int64_t per_image = std::max({top * top * std::max(cfg_.in_channels, cfg_.out_channels), g * g * cfg_.z_channels});
  per_image = std::max(per_image, load_encoder(ws, top));
  quant_conv_ = load_conv(ws, "quant_conv", cfg_.codebook_embed_dim, cfg_.z_channels, 1);
  codebook_ = ws.load("quantize.embedding.weight", {cfg_.codebook_size, cfg_.codebook_embed_dim}, DType::F32);
  post_quant_conv_ = load_conv(ws, "post_quant_conv", cfg_.z_channels, cfg_.codebook_embed_dim, 1);
  per_image = std::max(per_image, load_decoder(ws, g));
  for (const std::string& n : ws.unused())
    if (n != "quantize.codebook_used")  // a training statistic some checkpoints keep
      throw Error(path + ": tensor " + n + " is not part of a VQ model with this metadata");

  const uint64_t bytes = static_cast<uint64_t>(per_image) * 4 * static_cast<uint64_t>(max_images);
  if (bytes > ctx.caps().max_storage_buffer_range)
    throw Error(path + ": " + std::to_string(max_images) + " images of " + std::to_string(top) + "x" +
                std::to_string(top) + " need " + std::to_string(bytes >> 20) +
                " MiB activations, over this device's storage binding limit; use fewer images per call");
  for (int i = 0; i < kPool; ++i)
    pool_.push_back(ctx.tensor(DType::F32, {max_images * per_image}, "vq activations " + std::to_string(i)));
  ids_ = ctx.tensor(DType::U32, {max_images, g * g}, "vq encoded ids");
}

TensorView VqModel::view(const Act& a) const {
  TensorView v = pool_[static_cast<size_t>(a.slot)].view();
  v.shape = {n_, a.h, a.w, a.c};
  v.bytes = static_cast<VkDeviceSize>(n_ * a.h * a.w * a.c) * 4;
  return v;
}

int VqModel::free_slot(std::initializer_list<int> busy) const {
  for (int i = 0; i < kPool; ++i)
    if (std::find(busy.begin(), busy.end(), i) == busy.end()) return i;
  throw Error("vq: activation pool exhausted");
}

VqModel::Act VqModel::conv(CommandStream& s, const Act& x, const Conv& c, int64_t cout, int64_t k, int out_slot) {
  Act y{out_slot, x.h, x.w, cout};
  ops::conv2d(s, view(x), c.w, c.b, view(y), ops::Conv2dParams::same(static_cast<uint32_t>(k)));
  return y;
}

VqModel::Act VqModel::res_block(CommandStream& s, const Act& x, const Res& r) {
  // h = conv2(swish(norm2(conv1(swish(norm1(x)))))); out = shortcut(x) + h
  const int t1 = free_slot({x.slot}), t2 = free_slot({x.slot, t1});
  const Act n1{t1, x.h, x.w, r.cin};
  ops::GroupNormParams gn;
  gn.swish = true;
  ops::group_norm(s, view(x), r.norm1.gamma, r.norm1.beta, view(n1), gn);
  const Act h = conv(s, n1, r.conv1, r.cout, 3, t2);
  ops::group_norm(s, view(h), r.norm2.gamma, r.norm2.beta, view(h), gn);
  Act out = x;
  if (r.cin != r.cout) out = conv(s, x, r.nin, r.cout, 1, t1);
  const TensorView res = view(out);
  ops::conv2d(s, view(h), r.conv2.w, r.conv2.b, res, ops::Conv2dParams::same(3), &res);
  return out;
}

VqModel::Act VqModel::attn_block(CommandStream& s, const Act& x, const Attn& a) {
  const int n = free_slot({x.slot}), q = free_slot({x.slot, n}), k = free_slot({x.slot, n, q}),
            v = free_slot({x.slot, n, q, k}), o = free_slot({x.slot, n, q, k, v});
  const Act hn{n, x.h, x.w, a.c};
  ops::group_norm(s, view(x), a.norm.gamma, a.norm.beta, view(hn), ops::GroupNormParams{});
  const Act aq = conv(s, hn, a.q, a.c, 1, q), ak = conv(s, hn, a.k, a.c, 1, k), av = conv(s, hn, a.v, a.c, 1, v);
  const Act ao{o, x.h, x.w, a.c};
  ops::spatial_attention(s, view(aq), view(ak), view(av), view(ao));
  const TensorView res = view(x);
  ops::conv2d(s, view(ao), a.proj.w, a.proj.b, res, ops::Conv2dParams::same(1), &res);
  return x;
}

VqModel::Act VqModel::mid(CommandStream& s, Act x, const Half& h) {
  x = res_block(s, x, h.mid0);
  x = attn_block(s, x, h.mid1);
  return res_block(s, x, h.mid2);
}

VqModel::Act VqModel::tail(CommandStream& s, const Act& x, const Half& h, int64_t cout) {
  const int t = free_slot({x.slot});
  const Act n{t, x.h, x.w, x.c};
  ops::GroupNormParams gn;
  gn.swish = true;
  ops::group_norm(s, view(x), h.norm_out.gamma, h.norm_out.beta, view(n), gn);
  return conv(s, n, h.conv_out, cout, 3, free_slot({t}));
}

TensorView VqModel::decode(CommandStream& s, const TensorView& ids, int64_t n, int64_t grid) {
  if (n < 1 || n > max_images_ || grid < 1 || grid > max_grid_)
    throw Error(path_ + ": decode of " + std::to_string(n) + " images at grid " + std::to_string(grid) +
                " exceeds the model's limits (" + std::to_string(max_images_) + " images, grid " +
                std::to_string(max_grid_) + ")");
  if (ids.numel() < n * grid * grid) throw Error(path_ + ": decode: too few token ids");
  n_ = n;
  const Act lat{0, grid, grid, cfg_.codebook_embed_dim};
  TensorView idv = ids;
  idv.shape = {n * grid * grid};
  idv.bytes = static_cast<VkDeviceSize>(n * grid * grid) * 4;
  if (cfg_.codebook_l2_norm)
    ops::codebook_lookup(s, idv, codebook_, view(lat));
  else
    ops::embedding(s, codebook_, idv, view(lat).reshape({n * grid * grid, cfg_.codebook_embed_dim}));
  Act x = conv(s, lat, post_quant_conv_, cfg_.z_channels, 1, 1);
  x = conv(s, x, dec_.conv_in, cfg_.ch * cfg_.decoder_ch_mult.back(), 3, 0);
  x = mid(s, x, dec_);
  for (size_t i = 0; i < dec_.levels.size(); ++i) {
    const Level& lv = dec_.levels[i];
    for (size_t j = 0; j < lv.res.size(); ++j) {
      x = res_block(s, x, lv.res[j]);
      if (!lv.attn.empty()) x = attn_block(s, x, lv.attn[j]);
    }
    if (i + 1 != dec_.levels.size()) {
      const Act up{free_slot({x.slot}), x.h * 2, x.w * 2, x.c};
      ops::upsample_nearest_2x(s, view(x), view(up));
      x = conv(s, up, lv.resample, x.c, 3, free_slot({up.slot}));
    }
  }
  return view(tail(s, x, dec_, cfg_.out_channels));
}

TensorView VqModel::encode(CommandStream& s, const TensorView& pixels, int64_t n, int64_t height, int64_t width) {
  const int64_t ds = cfg_.downsample();
  if (n < 1 || n > max_images_ || height % ds || width % ds || height / ds > max_grid_ || width / ds > max_grid_ ||
      height < ds || width < ds)
    throw Error(path_ + ": encode of " + std::to_string(n) + " images of " + std::to_string(height) + "x" +
                std::to_string(width) + " exceeds the model's limits or is not a multiple of " + std::to_string(ds));
  if (pixels.numel() != n * height * width * cfg_.in_channels) throw Error(path_ + ": encode: pixel count mismatch");
  if (!cfg_.codebook_l2_norm)
    throw Error(path_ + ": encode: this VQ's codes are not L2-normalised (Chameleon's VQGAN), and the engine's "
                        "nearest-code search is the cosine one; it decodes only");
  n_ = n;
  const Act img{0, height, width, cfg_.in_channels};
  s.copy(pixels, view(img));
  Act x = conv(s, img, enc_.conv_in, cfg_.ch, 3, 1);
  for (size_t i = 0; i < enc_.levels.size(); ++i) {
    const Level& lv = enc_.levels[i];
    for (size_t j = 0; j < lv.res.size(); ++j) {
      x = res_block(s, x, lv.res[j]);
      if (!lv.attn.empty()) x = attn_block(s, x, lv.attn[j]);
    }
    if (i + 1 != enc_.levels.size()) {
      const Act down{free_slot({x.slot}), x.h / 2, x.w / 2, x.c};
      ops::conv2d(s, view(x), lv.resample.w, lv.resample.b, view(down), ops::Conv2dParams::downsample());
      x = down;
    }
  }
  x = mid(s, x, enc_);
  x = tail(s, x, enc_, cfg_.z_channels);
  const Act q = conv(s, x, quant_conv_, cfg_.codebook_embed_dim, 1, free_slot({x.slot}));
  TensorView ids = ids_.view();
  ids.shape = {n, x.h * x.w};
  ids.bytes = static_cast<VkDeviceSize>(n * x.h * x.w) * 4;
  ops::codebook_quantize(s, view(q), codebook_, ids);
  return ids;
}

}  // namespace vkspec
