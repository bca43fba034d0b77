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

CheckResult check_bias_act(Context& ctx, int64_t rows, int64_t c, bool bias, bool relu) {
  const auto x = random_floats(static_cast<size_t>(rows * c), 3);
  const auto b = bias ? random_floats(static_cast<size_t>(c), 4) : std::vector<float>{};
  Tensor tx = upload_floats(ctx, x, DType::F32, {rows, c}, "x"), ty = ctx.tensor(DType::F32, {rows, c}, "y");
  Tensor tb = bias ? upload_floats(ctx, b, DType::F32, {c}, "bias") : Tensor{};
  CommandStream s(ctx);
  ops::bias_act(s, tx, bias ? tb.view() : TensorView{}, ty, relu);
  s.submit_and_wait();
  return {normalised_error(download_floats(ctx, ty), ref::bias_act(x, b, relu)), 1e-7,
          std::to_string(rows) + "x" + std::to_string(c)};
}

CheckResult check_pool(Context& ctx, int64_t n, int64_t h, int64_t w, int64_t c, bool average) {
  const auto x = random_floats(static_cast<size_t>(n * h * w * c), 5);
  Tensor tx = upload_floats(ctx, x, DType::F32, {n, h, w, c}, "x");
  Tensor ty = ctx.tensor(DType::F32, {n, h / 2, w / 2, c}, "y");
  CommandStream s(ctx);
  if (average) {
    ops::avg_pool_2x2(s, tx, ty);
  } else {
    ops::max_pool_2x2(s, tx, ty);
  }
  s.submit_and_wait();
  const auto want = average ? ref::avg_pool_2x2(x, n, h, w, c) : ref::max_pool_2x2(x, n, h, w, c);
  return {normalised_error(download_floats(ctx, ty), want), 0.0,
          std::to_string(n) + "x" + std::to_string(h) + "x" + std::to_string(w) + "x" + std::to_string(c)};
}

VKSPEC_OP_CHECK("add", "n=1", [](Context& c) { return check_add(c, 1); });
VKSPEC_OP_CHECK("bias_act", "bias relu 7x300", [](Context& c) { return check_bias_act(c, 7, 300, true, true); });
VKSPEC_OP_CHECK("bias_act", "bias 1x10", [](Context& c) { return check_bias_act(c, 1, 10, true, false); });
VKSPEC_OP_CHECK("bias_act", "relu only 33x64", [](Context& c) { return check_bias_act(c, 33, 64, false, true); });
VKSPEC_OP_CHECK("max_pool", "2x32x32x32", [](Context& c) { return check_pool(c, 2, 32, 32, 32, false); });
VKSPEC_OP_CHECK("max_pool", "odd 1x9x7x5", [](Context& c) { return check_pool(c, 1, 9, 7, 5, false); });
VKSPEC_OP_CHECK("avg_pool", "3x32x32x1", [](Context& c) { return check_pool(c, 3, 32, 32, 1, true); });
VKSPEC_OP_CHECK("avg_pool", "odd 2x5x9x3", [](Context& c) { return check_pool(c, 2, 5, 9, 3, true); });
VKSPEC_OP_CHECK("add", "n=1000003", [](Context& c) { return check_add(c, 1000003); });

}  // namespace
}  // namespace vkspec
