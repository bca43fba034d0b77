#pragma once
// MuLo-SD's training-free token resampling through pixels, recorded on the GPU with the
// tokenizer: up = decode the low-resolution grid, nearest 2x, encode; down = decode the
// high-resolution grid, 2x2 average, encode (the way tools/encode_dataset.py made the
// low-resolution model's training tokens).
#include "engine/model/tokenizer.h"

namespace vkspec {

class PixelResampler {
 public:
  // low_grid: the low-resolution token grid side; the high one is twice that.
  PixelResampler(Context& ctx, Tokenizer& tokenizer, int64_t low_grid);

  // low: u32 [low_grid^2] -> high: u32 [(2 low_grid)^2] (both raster order, one image).
  void record_up(CommandStream& s, const TensorView& low, const TensorView& high);
  // high: u32 [(2 low_grid)^2] -> low: u32 [low_grid^2].
  void record_down(CommandStream& s, const TensorView& high, const TensorView& low);

 private:
  Tokenizer& tokenizer_;
  int64_t low_, ds_;
  Tensor small_px_, big_px_;  // [1, low * ds, ...] and [1, 2 low * ds, ...] pixels
};

}  // namespace vkspec
