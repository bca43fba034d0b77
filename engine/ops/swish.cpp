#include "engine/ops/swish.h"

#include "engine/ops/unary.h"
#include "shaders/shader_ids.h"

namespace vkspec::ops {

void swish(CommandStream& s, const TensorView& x, const TensorView& y) {
  unary_elementwise(s, shaders::swish, "swish", x, y);
}

}  // namespace vkspec::ops
