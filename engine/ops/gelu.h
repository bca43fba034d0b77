#pragma once
// GELU with the tanh approximation (torch's GELU(approximate='tanh'), LlamaGen's caption MLP),
// f32 elementwise; any shape. y may be x.
#include "engine/vk/command_stream.h"

namespace vkspec::ops {

void gelu_tanh(CommandStream& s, const TensorView& x, const TensorView& y);

}  // namespace vkspec::ops
