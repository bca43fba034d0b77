#include "engine/checks/op_check.h"
#include "engine/ops/upsample.h"
#include "engine/ref/upsample_ref.h"

namespace vkspec {
namespace {

CheckResult check_upsample(Context& ctx, int64_t n, int64_t h, int64_t w, int64_t c) {
  const auto x = random_floats(static_cast<size_t>(n * h * w * c), 41);
  Tensor tx = upload_floats(ctx, x, DType::F32, {n, h, w, c}, "x");
  Tensor ty = ctx.tensor(DType::F32, {n, 2 * h, 2 * w, c}, "y");
  CommandStream s(ctx);
  ops::upsample_nearest_2x(s, tx, ty);
  s.submit_and_wait();
  // A copy: any difference is a wrong index, so demand exact equality.
  return {
      normalised_error(download_floats(ctx, ty), ref::upsample_nearest_2x(x, n, h, w, c)), 0.0,
      "x [" + std::to_string(n) + ", " + std::to_string(h) + ", " + std::to_string(w) + ", " + std::to_string(c) + "]"};
}

VKSPEC_OP_CHECK("upsample_nearest_2x", "1x1x1x32", [](Context& c) { return check_upsample(c, 1, 1, 1, 32); });
VKSPEC_OP_CHECK("upsample_nearest_2x", "2x7x5x64", [](Context& c) { return check_upsample(c, 2, 7, 5, 64); });
VKSPEC_OP_CHECK("upsample_nearest_2x", "1x16x16x96", [](Context& c) { return check_upsample(c, 1, 16, 16, 96); });
VKSPEC_OP_CHECK("upsample_nearest_2x", "1x33x33x3", [](Context& c) { return check_upsample(c, 1, 33, 33, 3); });

}  // namespace
}  // namespace vkspec
