#include "engine/checks/op_check.h"
#include "engine/ops/gelu.h"
#include "engine/ref/gelu_ref.h"

namespace vkspec {
namespace {

CheckResult check_gelu(Context& ctx, Shape shape, bool in_place) {
  // Wide range: both tails (-> 0 and -> x) and exp overflow in the shader's tanh.
  auto x = random_floats(static_cast<size_t>(shape.numel()), 37, -10.0f, 10.0f);
  if (x.size() > 2) {
    x[0] = -100.0f;
    x[1] = 100.0f;
  }
  Tensor tx = upload_floats(ctx, x, DType::F32, shape, "x");
  Tensor ty = in_place ? Tensor() : ctx.tensor(DType::F32, shape, "y");
  const Tensor& out = in_place ? tx : ty;
  CommandStream s(ctx);
  ops::gelu_tanh(s, tx, out);
  s.submit_and_wait();
  return {normalised_error(download_floats(ctx, out), ref::gelu_tanh(x)), 1e-6, "x " + shape.str()};
}

VKSPEC_OP_CHECK("gelu_tanh", "[3, 40]", [](Context& c) { return check_gelu(c, {3, 40}, false); });
VKSPEC_OP_CHECK("gelu_tanh", "[8, 2048] in place", [](Context& c) { return check_gelu(c, {8, 2048}, true); });
VKSPEC_OP_CHECK("gelu_tanh", "[1]", [](Context& c) { return check_gelu(c, {1}, false); });

}  // namespace
}  // namespace vkspec
