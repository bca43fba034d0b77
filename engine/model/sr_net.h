#pragma once
// A small pixel super-resolution net (tools/vkspec_models.py SRNet, tools/train_sr_net.py):
// MuLo-SD's pixel-space upsampler runs it between VQ-decoding a low-resolution draft and
// re-encoding (decoding/upsampler_pixel_sr.*). y = nearest_up(x) + pixel_shuffle(body(x)),
// body = `depth` 3x3 convs with SiLU between them, the last one to scale^2 channels.
// Single-channel images, channel-last [N, H, W, 1] in [-1, 1].
#include <string>
#include <vector>

#include "engine/vk/command_stream.h"
#include "engine/vk/context.h"

namespace vkspec {

class SrNet {
 public:
  // Sized for at most max_images images of at most max_side x max_side input pixels per call.
  SrNet(Context& ctx, const std::string& path, int64_t max_side, int64_t max_images = 1);

  const std::string& path() const { return path_; }
  int64_t scale() const { return scale_; }

  // x: f32 [n, h, w, 1] -> y: f32 [n, scale h, scale w, 1]; y must not overlap x.
  void record(CommandStream& s, const TensorView& x, const TensorView& y);

 private:
  struct Conv {
    Tensor w, b;
    int64_t cout = 0;
  };
  std::string path_;
  int64_t scale_, max_side_, max_images_;
  std::vector<Conv> convs_;
  Tensor act_[2];                // f32 [max_images, side, side, channels] ping-pong
  Tensor shuffled_, up_, half_;  // [.., scale side, scale side, 1]; half_: x4's first nearest 2x
};

}  // namespace vkspec
