#include <cstring>

#include "engine/checks/op_check.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/swish.h"
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

CheckResult check_bias_act(Context& ctx, int64_t rows, int64_t c, bool bias, ops::Activation act,
                           bool residual = false) {
  const auto x = random_floats(static_cast<size_t>(rows * c), 3);
  const auto b = bias ? random_floats(static_cast<size_t>(c), 4) : std::vector<float>{};
  const auto r = residual ? random_floats(static_cast<size_t>(rows * c), 5) : std::vector<float>{};
  Tensor tx = upload_floats(ctx, x, DType::F32, {rows, c}, "x"), ty = ctx.tensor(DType::F32, {rows, c}, "y");
  Tensor tb = bias ? upload_floats(ctx, b, DType::F32, {c}, "bias") : Tensor{};
  Tensor tr = residual ? upload_floats(ctx, r, DType::F32, {rows, c}, "residual") : Tensor{};
  CommandStream s(ctx);
  ops::bias_act(s, tx, bias ? tb.view() : TensorView{}, ty, act, residual ? tr.view() : TensorView{});
  s.submit_and_wait();
  // SiLU's exp is the device's: swish's tolerance; GELU's erf is approximated (1.5e-7 absolute).
  const bool transcendental = act == ops::Activation::Silu || act == ops::Activation::Gelu;
  return {normalised_error(download_floats(ctx, ty), ref::bias_act(x, b, static_cast<int>(act), r)),
          transcendental ? 1e-6 : 1e-7, std::to_string(rows) + "x" + std::to_string(c)};
}

// bias_act with SiLU and a residual gives the bits of bias_act, swish and add run one after another.
CheckResult check_bias_act_fused(Context& ctx) {
  const int64_t rows = 5, c = 96;
  const auto x = random_floats(static_cast<size_t>(rows * c), 6, -100.0f, 100.0f), b = random_floats(c, 7);
  const auto r = random_floats(static_cast<size_t>(rows * c), 8);
  Tensor tx = upload_floats(ctx, x, DType::F32, {rows, c}, "x"), tb = upload_floats(ctx, b, DType::F32, {c}, "bias");
  Tensor tr = upload_floats(ctx, r, DType::F32, {rows, c}, "residual");
  Tensor fused = ctx.tensor(DType::F32, {rows, c}, "fused"), apart = ctx.tensor(DType::F32, {rows, c}, "apart");
  CommandStream s(ctx);
  ops::bias_act(s, tx, tb, fused, ops::Activation::Silu, tr);
  ops::bias_act(s, tx, tb, apart, ops::Activation::None);
  ops::swish(s, apart, apart);
  ops::add(s, tr, apart, apart);
  s.submit_and_wait();
  const auto f = download_floats(ctx, fused), a = download_floats(ctx, apart);
  size_t differ = 0;
  for (size_t i = 0; i < f.size(); ++i) differ += std::memcmp(&f[i], &a[i], 4) != 0;
  return {static_cast<double>(differ), 0.0, std::to_string(differ) + " of " + std::to_string(f.size()) + " differ"};
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
using A = ops::Activation;
VKSPEC_OP_CHECK("bias_act", "bias relu 7x300", [](Context& c) { return check_bias_act(c, 7, 300, true, A::Relu); });
VKSPEC_OP_CHECK("bias_act", "bias 1x10", [](Context& c) { return check_bias_act(c, 1, 10, true, A::None); });
VKSPEC_OP_CHECK("bias_act", "relu only 33x64", [](Context& c) { return check_bias_act(c, 33, 64, false, A::Relu); });
VKSPEC_OP_CHECK("bias_act", "bias silu 9x200", [](Context& c) { return check_bias_act(c, 9, 200, true, A::Silu); });
VKSPEC_OP_CHECK("bias_act", "bias gelu 9x200", [](Context& c) { return check_bias_act(c, 9, 200, true, A::Gelu); });
VKSPEC_OP_CHECK("bias_act", "gelu only 2x2048", [](Context& c) { return check_bias_act(c, 2, 2048, false, A::Gelu); });
VKSPEC_OP_CHECK("bias_act", "bias residual 4x130",
                [](Context& c) { return check_bias_act(c, 4, 130, true, A::None, true); });
VKSPEC_OP_CHECK("bias_act", "silu residual, no bias 3x64",
                [](Context& c) { return check_bias_act(c, 3, 64, false, A::Silu, true); });
VKSPEC_OP_CHECK("bias_act", "silu + residual = bias_act, swish, add (bits)",
                [](Context& c) { return check_bias_act_fused(c); });
VKSPEC_OP_CHECK("max_pool", "2x32x32x32", [](Context& c) { return check_pool(c, 2, 32, 32, 32, false); });
VKSPEC_OP_CHECK("max_pool", "odd 1x9x7x5", [](Context& c) { return check_pool(c, 1, 9, 7, 5, false); });
VKSPEC_OP_CHECK("avg_pool", "3x32x32x1", [](Context& c) { return check_pool(c, 3, 32, 32, 1, true); });
VKSPEC_OP_CHECK("avg_pool", "odd 2x5x9x3", [](Context& c) { return check_pool(c, 2, 5, 9, 3, true); });
VKSPEC_OP_CHECK("add", "n=1000003", [](Context& c) { return check_add(c, 1000003); });

}  // namespace
}  // namespace vkspec
