#pragma once
// MuLo-SD's training-free token resampling through pixels, recorded on the GPU with the
// tokenizer: up = decode the low-resolution grid, nearest r x, encode; down = decode the
// high-resolution grid, r x r average, encode (the way tools/encode_dataset.py made the
// low-resolution model's training tokens). r is a power of two: both maps are composed of 2x
// steps (nearest 2x twice is nearest 4x; the 2x2 average of 2x2 averages is the 4x4 average).
#include <vector>

#include "engine/model/tokenizer.h"

namespace vkspec {

class PixelResampler {
 public:
  // low_grid: the low-resolution token grid side; the high one is ratio times that. Throws Error
  // for a ratio that is not a power of two >= 2.
  PixelResampler(Context& ctx, Tokenizer& tokenizer, int64_t low_grid, int64_t ratio = 2);

  int64_t ratio() const { return ratio_; }
  // low: u32 [low_grid^2] -> high: u32 [(ratio low_grid)^2] (both raster order, one image).
  void record_up(CommandStream& s, const TensorView& low, const TensorView& high);
  // high: u32 [(ratio low_grid)^2] -> low: u32 [low_grid^2].
  void record_down(CommandStream& s, const TensorView& high, const TensorView& low);

 private:
  Tokenizer& tokenizer_;
  int64_t low_, ratio_, ds_;
  // Pixels at each scale between the two grids: [1, low * ds * 2^i, ..., channels] for
  // i = 0 .. log2(ratio) (the first is the low-resolution image, the last the high one).
  std::vector<Tensor> px_;
};

}  // namespace vkspec
