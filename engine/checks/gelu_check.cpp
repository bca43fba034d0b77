#include "engine/checks/unary_check.h"
#include "engine/ops/gelu.h"
#include "engine/ref/gelu_ref.h"

namespace vkspec {
namespace {

// Wide range: both tails (-> 0 and -> x) and exp overflow in the shader's tanh.
const UnaryOpCase kGelu{ops::gelu_tanh, ref::gelu_tanh, 37, -10.0f, 10.0f};

VKSPEC_OP_CHECK("gelu_tanh", "[3, 40]", [](Context& c) { return check_unary_op(c, kGelu, {3, 40}, false); });
VKSPEC_OP_CHECK("gelu_tanh", "[8, 2048] in place", [](Context& c) {
  return check_unary_op(c, kGelu, {8, 2048}, true);
});
VKSPEC_OP_CHECK("gelu_tanh", "[1]", [](Context& c) { return check_unary_op(c, kGelu, {1}, false); });

}  // namespace
}  // namespace vkspec
