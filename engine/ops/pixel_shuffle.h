#pragma once
// Pixel shuffle (sub-pixel convolution's rearrangement, PyTorch's F.pixel_shuffle) on
// channel-last activations: x [N, H, W, C r^2] f32 -> y [N, r H, r W, C] f32,
// y[n, r i + a, r j + b, c] = x[n, i, j, c r^2 + a r + b]. MuLo-SD's upsamplers
// (decoding/upsampler_*.h) end with it. y must not overlap x.
#include <cstdint>

#include "engine/vk/command_stream.h"

namespace vkspec::ops {

void pixel_shuffle(CommandStream& s, const TensorView& x, const TensorView& y, int64_t r);

}  // namespace vkspec::ops
