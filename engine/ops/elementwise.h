#pragma once
// Elementwise ops on f32 tensors.
#include "engine/vk/command_stream.h"

namespace vkspec::ops {

// y = a + b (all f32, same element count). y may alias a or b.
void add(CommandStream& s, const TensorView& a, const TensorView& b, const TensorView& y);

}  // namespace vkspec::ops
