#include "engine/checks/op_check.h"
#include "engine/ops/elementwise.h"
#include "engine/ref/elementwise_ref.h"

namespace vkspec {
namespace {

CheckResult check_add(Context& ctx, int64_t n) {
  const auto a = random_floats(static_cast<size_t>(n), 1), b = random_floats(static_cast<size_t>(n), 2);
  Tensor ta = upload_floats(ctx, a, DType::F32, {n}, "a"), tb = upload_floats(ctx, b, DType::F32, {n}, "b");
  Tensor ty = ctx.tensor(DType::F32, {n}, "y");
  CommandStream s(ctx);
  ops::add(s, ta, tb, ty);
  s.submit_and_wait();
  return {normalised_error(download_floats(ctx, ty), ref::add(a, b)), 1e-7, "n=" + std::to_string(n)};
}

VKSPEC_OP_CHECK("add", "n=1", [](Context& c) { return check_add(c, 1); });
VKSPEC_OP_CHECK("add", "n=1000003", [](Context& c) { return check_add(c, 1000003); });

}  // namespace
}  // namespace vkspec
