#include "engine/checks/op_check.h"
#include "engine/ops/swish.h"
#include "engine/ref/swish_ref.h"

namespace vkspec {
namespace {

CheckResult check_swish(Context& ctx, Shape shape, bool in_place) {
  // Wide range: the tails (x * sigmoid(x) -> 0 and -> x) and exp overflow below -88.
  auto x = random_floats(static_cast<size_t>(shape.numel()), 31, -12.0f, 12.0f);
  if (x.size() > 2) {
    x[0] = -100.0f;
    x[1] = 100.0f;
  }
  Tensor tx = upload_floats(ctx, x, DType::F32, shape, "x");
  Tensor ty = in_place ? Tensor() : ctx.tensor(DType::F32, shape, "y");
  const Tensor& out = in_place ? tx : ty;
  CommandStream s(ctx);
  ops::swish(s, tx, out);
  s.submit_and_wait();
  return {normalised_error(download_floats(ctx, out), ref::swish(x)), 1e-6, "x " + shape.str()};
}

VKSPEC_OP_CHECK("swish", "[1, 7, 5, 32]", [](Context& c) { return check_swish(c, {1, 7, 5, 32}, false); });
VKSPEC_OP_CHECK("swish", "[2, 33, 33, 64] in place", [](Context& c) { return check_swish(c, {2, 33, 33, 64}, true); });
VKSPEC_OP_CHECK("swish", "[1]", [](Context& c) { return check_swish(c, {1}, false); });

}  // namespace
}  // namespace vkspec
