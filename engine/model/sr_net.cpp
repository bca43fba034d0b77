#include "engine/model/sr_net.h"

#include "common/error.h"
#include "engine/model/weights.h"
#include "engine/ops/conv2d.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/pixel_shuffle.h"
#include "engine/ops/swish.h"
#include "engine/ops/upsample.h"

namespace vkspec {
namespace {

// Metadata the engine's forward depends on, with the one value it implements.
constexpr MetaValue kContract[] = {{"in_channels", "1"}, {"activation", "silu"}, {"residual", "nearest"}};

}  // namespace

SrNet::SrNet(Context& ctx, const std::string& path, int64_t max_side, int64_t max_images)
    : path_(path), max_side_(max_side), max_images_(max_images) {
  if (max_side < 1 || max_images < 1) throw Error(path + ": max_side and max_images must be >= 1");
  WeightStore ws(ctx, path);
  const SafetensorsFile& f = ws.file();
  require_kind(f, path, "sr_net", "a super-resolution net");
  require_meta_values(f, path, kContract);
  scale_ = f.meta_int("scale");
  const int64_t ch = f.meta_int("channels"), depth = f.meta_int("depth");
  if (scale_ != 2 && scale_ != 4)
    throw Error(path + ": scale " + std::to_string(scale_) + " (the engine runs 2 and 4)");
  if (ch < 1 || depth < 2) throw Error(path + ": channels " + std::to_string(ch) + ", depth " + std::to_string(depth));
  const std::string from = "channels=" + std::to_string(ch) + ", depth=" + std::to_string(depth);
  int64_t cin = 1;
  for (int64_t i = 0; i < depth; ++i) {
    const std::string p = "convs." + std::to_string(i);
    Conv c;
    c.cout = i + 1 < depth ? ch : scale_ * scale_;
    c.w = ws.load(p + ".weight", {c.cout, cin, 3, 3}, DType::F32, from);
    c.b = ws.load(p + ".bias", {c.cout}, DType::F32, from);
    convs_.push_back(std::move(c));
    cin = ch;
  }
  if (const auto unused = ws.unused(); !unused.empty())
    throw Error(path + ": unexpected tensor " + unused[0] + " (depth " + std::to_string(depth) + ")");
  const int64_t n = max_images, side = max_side, big = scale_ * max_side;
  for (Tensor& t : act_)
    t = ctx.tensor(DType::F32, {n, side, side, std::max(ch, scale_ * scale_)}, "sr net activations");
  shuffled_ = ctx.tensor(DType::F32, {n, big, big, 1}, "sr net residual");
  up_ = ctx.tensor(DType::F32, {n, big, big, 1}, "sr net nearest");
  half_ = ctx.tensor(DType::F32, {n, 2 * side, 2 * side, 1}, "sr net nearest 2x");
}

void SrNet::record(CommandStream& s, const TensorView& x, const TensorView& y) {
  const int64_t n = x.shape[0], h = x.shape[1], w = x.shape[2];
  if (x.dtype != DType::F32 || x.shape.rank != 4 || x.shape[3] != 1 || n < 1 || n > max_images_ || h < 1 || w < 1 ||
      h > max_side_ || w > max_side_)
    throw Error(path_ + ": input must be f32 [1.." + std::to_string(max_images_) +
                ", h, w, 1] with h, w <= " + std::to_string(max_side_) + ", got " + x.shape.str());
  const Shape want{n, scale_ * h, scale_ * w, 1};
  if (y.dtype != DType::F32 || !(y.shape == want))
    throw Error(path_ + ": output must be f32 " + want.str() + ", got " + y.shape.str());
  // Views of the preallocated buffers for this call's size.
  auto part = [](const Tensor& t, const Shape& shape) {
    return t.view().reshape({t.numel()}).rows(0, shape.numel()).reshape(shape);
  };
  TensorView in = x;
  for (size_t i = 0; i < convs_.size(); ++i) {
    const Conv& c = convs_[i];
    const TensorView out = part(act_[i % 2], {n, h, w, c.cout});
    ops::conv2d(s, in, c.w.view(), c.b.view(), out, ops::Conv2dParams::same(3));
    if (i + 1 < convs_.size()) ops::swish(s, out, out);
    in = out;
  }
  const TensorView res = part(shuffled_, want), up = part(up_, want);
  ops::pixel_shuffle(s, in, res, scale_);
  if (scale_ == 2) {
    ops::upsample_nearest_2x(s, x, up);
  } else {
    const TensorView half = part(half_, {n, 2 * h, 2 * w, 1});
    ops::upsample_nearest_2x(s, x, half);
    ops::upsample_nearest_2x(s, half, up);
  }
  ops::add(s, up, res, y);
}

}  // namespace vkspec
