#include "engine/checks/op_check.h"
#include "engine/ops/pixel_shuffle.h"
#include "engine/ref/pixel_shuffle_ref.h"

namespace vkspec {
namespace {

CheckResult check_pixel_shuffle(Context& ctx, int64_t n, int64_t h, int64_t w, int64_t c, int64_t r) {
  const auto x = random_floats(static_cast<size_t>(n * h * w * c * r * r), 43);
  Tensor tx = upload_floats(ctx, x, DType::F32, {n, h, w, c * r * r}, "x");
  Tensor ty = ctx.tensor(DType::F32, {n, r * h, r * w, c}, "y");
  CommandStream s(ctx);
  ops::pixel_shuffle(s, tx, ty, r);
  s.submit_and_wait();
  // A permutation: any difference is a wrong index, so demand exact equality.
  return {normalised_error(download_floats(ctx, ty), ref::pixel_shuffle(x, n, h, w, c, r)), 0.0,
          "x [" + std::to_string(n) + ", " + std::to_string(h) + ", " + std::to_string(w) + ", " +
              std::to_string(c * r * r) + "], r " + std::to_string(r)};
}

VKSPEC_OP_CHECK("pixel_shuffle", "1x8x8x4_r2", [](Context& c) { return check_pixel_shuffle(c, 1, 8, 8, 1, 2); });
VKSPEC_OP_CHECK("pixel_shuffle", "2x3x5x24_r2", [](Context& c) { return check_pixel_shuffle(c, 2, 3, 5, 6, 2); });
VKSPEC_OP_CHECK("pixel_shuffle", "1x4x4x128_r4", [](Context& c) { return check_pixel_shuffle(c, 1, 4, 4, 8, 4); });
VKSPEC_OP_CHECK("pixel_shuffle", "1x5x7x27_r3", [](Context& c) { return check_pixel_shuffle(c, 1, 5, 7, 3, 3); });

}  // namespace
}  // namespace vkspec
