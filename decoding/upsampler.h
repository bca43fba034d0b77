#pragma once
// How MuLo-SD turns a low-resolution token grid into high-resolution drafts (mulo --upsampler):
//   nearest   VQ-decode, nearest r x, VQ-encode (PixelResampler; training-free, ours: the
//             paper's pixel path with nearest in place of its super-resolution model)
//   pixel-sr  VQ-decode, the small trained super-resolution net (engine/model/sr_net.h), VQ-encode:
//             the paper's default pixel-space upsampler, our net standing in for its
//             off-the-shelf one
//   latent    the paper's trained latent-space upsampler (engine/model/latent_upsampler.h):
//             masked row-causal convs + pixel shuffle, quantised to the codebook
// All record GPU work on one image: low u32 [w * w] -> high u32 [(r w)^2], raster order.
#include <memory>
#include <string>

#include "decoding/pixel_resampler.h"

namespace vkspec {

class LatentUpsampler;
class SrNet;
struct ModelSet;

enum class UpsamplerKind { Nearest, PixelSr, Latent };

// "nearest" | "pixel-sr" | "latent"; throws naming the value otherwise.
UpsamplerKind upsampler_kind(const std::string& name);

class DraftUpsampler {
 public:
  virtual ~DraftUpsampler() = default;
  virtual void record_up(CommandStream& s, const TensorView& low, const TensorView& high) = 0;
};

// The upsampler of `kind` for low grids of side low_grid and target grids of side high_grid.
// `nearest` records through `resampler` (which must outlive it); the others need their model in
// `m` (throws naming the option that loads it, or the ratio it was trained for).
std::unique_ptr<DraftUpsampler> make_draft_upsampler(UpsamplerKind kind, const ModelSet& m, PixelResampler& resampler,
                                                     int64_t low_grid, int64_t high_grid);

}  // namespace vkspec
