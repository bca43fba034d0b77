#include "decoding/pixel_resampler.h"

#include "engine/ops/elementwise.h"
#include "engine/ops/upsample.h"
#include "common/error.h"

namespace vkspec {

PixelResampler::PixelResampler(Context& ctx, VqModel& vq, int64_t low_grid)
    : vq_(vq), low_(low_grid), ds_(vq.config().downsample()) {
  const VqConfig& c = vq.config();
  if (c.in_channels != c.out_channels)
    throw Error(vq.path() + ": pixel resampling needs as many input as output channels");
  const int64_t s = low_grid * ds_;
  small_px_ = ctx.tensor(DType::F32, {1, s, s, c.out_channels}, "mulo low-resolution pixels");
  big_px_ = ctx.tensor(DType::F32, {1, 2 * s, 2 * s, c.out_channels}, "mulo high-resolution pixels");
}

void PixelResampler::record_up(CommandStream& s, const TensorView& low, const TensorView& high) {
  ops::upsample_nearest_2x(s, vq_.decode(s, low, 1, low_), big_px_.view());
  const TensorView ids = vq_.encode(s, big_px_.view(), 1, 2 * low_ * ds_, 2 * low_ * ds_);
  s.copy(ids.reshape({4 * low_ * low_}), high);
}

void PixelResampler::record_down(CommandStream& s, const TensorView& high, const TensorView& low) {
  ops::avg_pool_2x2(s, vq_.decode(s, high, 1, 2 * low_), small_px_.view());
  const TensorView ids = vq_.encode(s, small_px_.view(), 1, low_ * ds_, low_ * ds_);
  s.copy(ids.reshape({low_ * low_}), low);
}

}  // namespace vkspec
