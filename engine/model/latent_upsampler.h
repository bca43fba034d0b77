#pragma once
// MuLo-SD's latent-space upsampler U_r (tools/vkspec_models.py LatentUpsampler,
// tools/train_latent_upsampler.py): a low-resolution token grid w x w -> latents on the
// r w x r w grid -> the nearest normalised code of the tokenizer's codebook = high-resolution
// tokens. Own embedding table, `depth` masked row-causal 3x3 convs with SiLU, a masked conv to
// e_dim r^2 channels, pixel shuffle r. The taps on the row below are zero in the file (checked at
// load), so high rows r i .. r i + r - 1 depend on low rows <= i only: a band can be upsampled
// before the rows below it exist.
#include <string>
#include <vector>

#include "engine/model/tokenizer.h"
#include "engine/vk/command_stream.h"
#include "engine/vk/context.h"

namespace vkspec {

class LatentUpsampler {
 public:
  // Trained for `tokenizer`'s codebook (size and code dimension must match); sized for low grids
  // up to max_low_grid and at most max_images images per call.
  LatentUpsampler(Context& ctx, const std::string& path, Tokenizer& tokenizer, int64_t max_low_grid,
                  int64_t max_images = 1);

  const std::string& path() const { return path_; }
  int64_t ratio() const { return ratio_; }

  // low: u32 [n, w * w] (raster order) -> latents f32 [n, r w, r w, e_dim], before quantisation;
  // valid until the next call.
  TensorView record_latents(CommandStream& s, const TensorView& low, int64_t n, int64_t w);
  // low: u32 [n, w * w] -> high: u32 [n, (r w)^2], the quantised latents.
  void record(CommandStream& s, const TensorView& low, const TensorView& high, int64_t n, int64_t w);

 private:
  struct Conv {
    Tensor w, b;
  };
  std::string path_;
  Tokenizer& tokenizer_;
  int64_t ratio_, channels_, e_dim_, max_low_, max_images_;
  Tensor embed_;
  std::vector<Conv> convs_;  // the masked hidden convs, then the output conv
  Tensor act_[2], latents_;
};

}  // namespace vkspec
