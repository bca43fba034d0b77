#include "engine/checks/op_check.h"
#include "engine/ops/rms_norm.h"
#include "engine/ref/rms_norm_ref.h"

namespace vkspec {
namespace {

CheckResult check_rms_norm(Context& ctx, int64_t rows, int64_t dim, DType wdt, bool in_place) {
  auto x = random_floats(static_cast<size_t>(rows * dim), 11, -3.0f, 3.0f);
  auto w = random_floats(static_cast<size_t>(dim), 12, 0.5f, 1.5f);
  if (wdt == DType::F16) w = round_to_half(w);
  Tensor tx = upload_floats(ctx, x, DType::F32, {rows, dim}, "x");
  Tensor tw = upload_floats(ctx, w, wdt, {dim}, "weight");
  Tensor ty = in_place ? Tensor() : ctx.tensor(DType::F32, {rows, dim}, "y");
  CommandStream s(ctx);
  ops::rms_norm(s, tx, tw, in_place ? tx.view() : ty.view(), 1e-5f);
  s.submit_and_wait();
  const double err = normalised_error(download_floats(ctx, in_place ? tx : ty), ref::rms_norm(x, w, 1e-5f));
  return {err, 1e-6, "rows=" + std::to_string(rows) + " dim=" + std::to_string(dim) + " weight " + dtype_name(wdt)};
}

VKSPEC_OP_CHECK("rms_norm", "rows=1 dim=1 f32", [](Context& c) { return check_rms_norm(c, 1, 1, DType::F32, false); });
VKSPEC_OP_CHECK("rms_norm", "rows=2 dim=768 f32",
                [](Context& c) { return check_rms_norm(c, 2, 768, DType::F32, false); });
VKSPEC_OP_CHECK("rms_norm", "rows=3 dim=1280 f16 in-place",
                [](Context& c) { return check_rms_norm(c, 3, 1280, DType::F16, true); });
VKSPEC_OP_CHECK("rms_norm", "rows=514 dim=1000 f16",
                [](Context& c) { return check_rms_norm(c, 514, 1000, DType::F16, false); });
VKSPEC_OP_CHECK("rms_norm", "rows=37 dim=3200 f32",
                [](Context& c) { return check_rms_norm(c, 37, 3200, DType::F32, false); });

}  // namespace
}  // namespace vkspec
