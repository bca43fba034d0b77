#include "engine/ops/gelu.h"

#include "engine/ops/unary.h"
#include "shaders/shader_ids.h"

namespace vkspec::ops {

void gelu_tanh(CommandStream& s, const TensorView& x, const TensorView& y) {
  unary_elementwise(s, shaders::gelu_tanh, "gelu_tanh", x, y);
}

}  // namespace vkspec::ops
