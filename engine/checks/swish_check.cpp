#include "engine/checks/unary_check.h"
#include "engine/ops/swish.h"
#include "engine/ref/swish_ref.h"

namespace vkspec {
namespace {

// Wide range: the tails (x * sigmoid(x) -> 0 and -> x) and exp overflow below -88.
const UnaryOpCase kSwish{ops::swish, ref::swish, 31, -12.0f, 12.0f};

VKSPEC_OP_CHECK("swish", "[1, 7, 5, 32]", [](Context& c) { return check_unary_op(c, kSwish, {1, 7, 5, 32}, false); });
VKSPEC_OP_CHECK("swish", "[2, 33, 33, 64] in place", [](Context& c) {
  return check_unary_op(c, kSwish, {2, 33, 33, 64}, true);
});
VKSPEC_OP_CHECK("swish", "[1]", [](Context& c) { return check_unary_op(c, kSwish, {1}, false); });

}  // namespace
}  // namespace vkspec
