#include "engine/checks/unary_check.h"

namespace vkspec {

CheckResult check_unary_op(Context& ctx, const UnaryOpCase& c, Shape shape, bool in_place) {
  auto x = random_floats(static_cast<size_t>(shape.numel()), c.seed, c.lo, c.hi);
  if (x.size() > 2) {
    x[0] = -100.0f;
    x[1] = 100.0f;
  }
  Tensor tx = upload_floats(ctx, x, DType::F32, shape, "x");
  Tensor ty = in_place ? Tensor() : ctx.tensor(DType::F32, shape, "y");
  const Tensor& out = in_place ? tx : ty;
  CommandStream s(ctx);
  c.op(s, tx, out);
  s.submit_and_wait();
  return {normalised_error(download_floats(ctx, out), c.reference(x)), 1e-6, "x " + shape.str()};
}

}  // namespace vkspec
