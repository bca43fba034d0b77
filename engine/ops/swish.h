#pragma once
// swish(x) = x * sigmoid(x) (SiLU), f32 elementwise; any shape. y may be x.
// (GroupNorm + swish is fused in group_norm; this is for the places where it stands alone.)
#include "engine/vk/command_stream.h"

namespace vkspec::ops {

void swish(CommandStream& s, const TensorView& x, const TensorView& y);

}  // namespace vkspec::ops
