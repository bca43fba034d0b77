#include "decoding/pixel_resampler.h"

#include "engine/ops/elementwise.h"
#include "engine/ops/upsample.h"
#include "engine/vk/context.h"
#include "common/error.h"

namespace vkspec {

PixelResampler::PixelResampler(Context& ctx, Tokenizer& tokenizer, int64_t low_grid, int64_t ratio)
    : tokenizer_(tokenizer), low_(low_grid), ratio_(ratio), ds_(tokenizer.downsample()) {
  if (ratio < 2 || (ratio & (ratio - 1)) != 0)
    throw Error("pixel resampler: the resolution ratio must be a power of two >= 2 (target grid / low-resolution "
                "grid), got " +
                std::to_string(ratio));
  if (low_grid < 1) throw Error("pixel resampler: the low-resolution grid must be at least 1 token wide");
  const int64_t channels = tokenizer.image_channels();
  if (tokenizer.input_channels() != channels)
    throw Error(tokenizer.path() + ": pixel resampling needs as many input as output channels");
  for (int64_t s = low_grid * ds_; s <= ratio * low_grid * ds_; s *= 2)
    px_.push_back(ctx.tensor(DType::F32, {1, s, s, channels}, "mulo pixels " + std::to_string(s)));
}

void PixelResampler::record_up(CommandStream& s, const TensorView& low, const TensorView& high) {
  TensorView px = tokenizer_.decode(s, low, 1, low_);
  for (size_t i = 1; i < px_.size(); ++i) {
    ops::upsample_nearest_2x(s, px, px_[i].view());
    px = px_[i].view();
  }
  const int64_t side = ratio_ * low_ * ds_, grid = ratio_ * low_;
  const TensorView ids = tokenizer_.encode(s, px, 1, side, side);
  s.copy(ids.reshape({grid * grid}), high);
}

void PixelResampler::record_down(CommandStream& s, const TensorView& high, const TensorView& low) {
  TensorView px = tokenizer_.decode(s, high, 1, ratio_ * low_);
  for (size_t i = px_.size() - 1; i-- > 0;) {
    ops::avg_pool_2x2(s, px, px_[i].view());
    px = px_[i].view();
  }
  const TensorView ids = tokenizer_.encode(s, px, 1, low_ * ds_, low_ * ds_);
  s.copy(ids.reshape({low_ * low_}), low);
}

}  // namespace vkspec
