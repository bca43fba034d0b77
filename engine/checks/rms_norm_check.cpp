#include <algorithm>

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

// The fused residual + norm: x + delta written back to x, and the norm of it (y aliasing delta,
// as the GPT calls it) against the reference of both steps.
CheckResult check_add_rms_norm(Context& ctx, int64_t rows, int64_t dim, DType wdt, bool y_is_delta) {
  auto x = random_floats(static_cast<size_t>(rows * dim), 13, -3.0f, 3.0f);
  auto d = random_floats(static_cast<size_t>(rows * dim), 14, -3.0f, 3.0f);
  auto w = random_floats(static_cast<size_t>(dim), 15, 0.5f, 1.5f);
  if (wdt == DType::F16) w = round_to_half(w);
  Tensor tx = upload_floats(ctx, x, DType::F32, {rows, dim}, "x");
  Tensor td = upload_floats(ctx, d, DType::F32, {rows, dim}, "delta");
  Tensor tw = upload_floats(ctx, w, wdt, {dim}, "weight");
  Tensor ty = y_is_delta ? Tensor() : ctx.tensor(DType::F32, {rows, dim}, "y");
  CommandStream s(ctx);
  ops::add_rms_norm(s, tx, td, tw, y_is_delta ? td.view() : ty.view(), 1e-5f);
  s.submit_and_wait();
  std::vector<float> sum(x.size());
  for (size_t i = 0; i < x.size(); ++i) sum[i] = x[i] + d[i];
  const double err_y = normalised_error(download_floats(ctx, y_is_delta ? td : ty), ref::rms_norm(sum, w, 1e-5f));
  const double err_x = normalised_error(download_floats(ctx, tx), sum);
  return {std::max(err_y, err_x), 1e-6,
          "rows=" + std::to_string(rows) + " dim=" + std::to_string(dim) + " weight " + dtype_name(wdt) +
              (y_is_delta ? ", y aliasing delta" : "") + "; error of the norm and of x + delta, the larger"};
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

VKSPEC_OP_CHECK("add_rms_norm", "rows=2 dim=768 f32",
                [](Context& c) { return check_add_rms_norm(c, 2, 768, DType::F32, false); });
VKSPEC_OP_CHECK("add_rms_norm", "rows=34 dim=1280 f32 y=delta",
                [](Context& c) { return check_add_rms_norm(c, 34, 1280, DType::F32, true); });
VKSPEC_OP_CHECK("add_rms_norm", "rows=514 dim=1000 f16 y=delta",
                [](Context& c) { return check_add_rms_norm(c, 514, 1000, DType::F16, true); });

}  // namespace
}  // namespace vkspec
