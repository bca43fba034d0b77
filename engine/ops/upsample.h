#pragma once
// Nearest-neighbour 2x upsampling (LlamaGen's Upsample: F.interpolate(scale_factor=2.0,
// mode="nearest") before its conv): x [N, H, W, C] f32 channel-last -> y [N, 2H, 2W, C] f32,
// y[n, 2i + a, 2j + b, c] = x[n, i, j, c] for a, b in {0, 1}. y must not overlap x.
#include "engine/vk/command_stream.h"

namespace vkspec::ops {

void upsample_nearest_2x(CommandStream& s, const TensorView& x, const TensorView& y);

}  // namespace vkspec::ops
