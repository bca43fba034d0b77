#include "decoding/pixel_resampler.h"

#include "engine/ops/elementwise.h"
#include "engine/ops/upsample.h"
#include "engine/vk/context.h"
#include "common/error.h"

namespace vkspec {

PixelResampler::PixelResampler(Context& ctx, Tokenizer& tokenizer, int64_t low_grid)
    : tokenizer_(tokenizer), low_(low_grid), ds_(tokenizer.downsample()) {
  const int64_t channels = tokenizer.image_channels();
  if (tokenizer.input_channels() != channels)
    throw Error(tokenizer.path() + ": pixel resampling needs as many input as output channels");
  const int64_t s = low_grid * ds_;
  small_px_ = ctx.tensor(DType::F32, {1, s, s, channels}, "mulo low-resolution pixels");
  big_px_ = ctx.tensor(DType::F32, {1, 2 * s, 2 * s, channels}, "mulo high-resolution pixels");
}

void PixelResampler::record_up(CommandStream& s, const TensorView& low, const TensorView& high) {
  ops::upsample_nearest_2x(s, tokenizer_.decode(s, low, 1, low_), big_px_.view());
  const TensorView ids = tokenizer_.encode(s, big_px_.view(), 1, 2 * low_ * ds_, 2 * low_ * ds_);
  s.copy(ids.reshape({4 * low_ * low_}), high);
}

void PixelResampler::record_down(CommandStream& s, const TensorView& high, const TensorView& low) {
  ops::avg_pool_2x2(s, tokenizer_.decode(s, high, 1, 2 * low_), small_px_.view());
  const TensorView ids = tokenizer_.encode(s, small_px_.view(), 1, low_ * ds_, low_ * ds_);
  s.copy(ids.reshape({low_ * low_}), low);
}

}  // namespace vkspec
