#pragma once
// The one way to dispatch an f32 elementwise unary shader (y[i] = f(x[i]), any shape, y may be x):
// ops::gelu_tanh and ops::swish are this with their shader. The shader takes x and y as bindings
// 0 and 1 and the element count as its only push constant, and spreads over grid_1d.
#include "engine/vk/command_stream.h"
#include "engine/vk/shader_registry.h"

namespace vkspec::ops {

// op names the caller in errors ("swish: tensors must be f32").
void unary_elementwise(CommandStream& s, ShaderId shader, const char* op, const TensorView& x, const TensorView& y);

}  // namespace vkspec::ops
