#include "engine/checks/op_check.h"
#include "engine/ops/swiglu.h"
#include "engine/ref/swiglu_ref.h"

namespace vkspec {
namespace {

std::string shape_name(int64_t rows, int64_t hidden) {
  return "rows=" + std::to_string(rows) + " hidden=" + std::to_string(hidden);
}

CheckResult check_swiglu(Context& ctx, int64_t rows, int64_t hidden, bool in_place) {
  const size_t n = static_cast<size_t>(rows * hidden);
  // Wide range so both the exp overflow (a << 0) and saturation (a >> 0) of silu are exercised.
  const auto a = random_floats(n, 21, -100.0f, 30.0f), b = random_floats(n, 22);
  Tensor ta = upload_floats(ctx, a, DType::F32, {rows, hidden}, "a");
  Tensor tb = upload_floats(ctx, b, DType::F32, {rows, hidden}, "b");
  Tensor ty = in_place ? Tensor() : ctx.tensor(DType::F32, {rows, hidden}, "y");
  CommandStream s(ctx);
  ops::swiglu(s, ta, tb, in_place ? ta.view() : ty.view());
  s.submit_and_wait();
  // GLSL specifies exp only to 3 + 2|x| ulp, and a reaches -100 here: hence 1e-5, not 1e-6.
  return {normalised_error(download_floats(ctx, in_place ? ta : ty), ref::swiglu(a, b)), 1e-5,
          shape_name(rows, hidden)};
}

CheckResult check_swiglu_fused(Context& ctx, int64_t rows, int64_t hidden, bool gelu = false) {
  const auto ab = random_floats(static_cast<size_t>(rows * hidden * 2), 23, -8.0f, 8.0f);
  std::vector<float> a, b;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < 2 * hidden; ++j)
      (j < hidden ? a : b).push_back(ab[static_cast<size_t>(r * 2 * hidden + j)]);
  Tensor tab = upload_floats(ctx, ab, DType::F32, {rows, 2 * hidden}, "ab");
  Tensor ty = ctx.tensor(DType::F32, {rows, hidden}, "y");
  CommandStream s(ctx);
  if (gelu)
    ops::geglu_fused(s, tab, ty);
  else
    ops::swiglu_fused(s, tab, ty);
  s.submit_and_wait();
  return {normalised_error(download_floats(ctx, ty), gelu ? ref::geglu(a, b) : ref::swiglu(a, b)), 1e-6,
          std::string(gelu ? "geglu " : "") + "fused " + shape_name(rows, hidden)};
}

VKSPEC_OP_CHECK("swiglu", "rows=1 hidden=1", [](Context& c) { return check_swiglu(c, 1, 1, false); });
VKSPEC_OP_CHECK("swiglu", "rows=2 hidden=2048 in-place", [](Context& c) { return check_swiglu(c, 2, 2048, true); });
VKSPEC_OP_CHECK("swiglu", "rows=257 hidden=3413", [](Context& c) { return check_swiglu(c, 257, 3413, false); });
VKSPEC_OP_CHECK("swiglu", "fused rows=2 hidden=2816", [](Context& c) { return check_swiglu_fused(c, 2, 2816); });
VKSPEC_OP_CHECK("swiglu", "fused rows=33 hidden=1001", [](Context& c) { return check_swiglu_fused(c, 33, 1001); });
// T5 v1.1's gated-gelu (flan-t5-xl's FFN of 5120): the GELU-tanh gate of the same kernel.
VKSPEC_OP_CHECK("swiglu", "geglu fused rows=120 hidden=5120",
                [](Context& c) { return check_swiglu_fused(c, 120, 5120, true); });
VKSPEC_OP_CHECK("swiglu", "geglu fused rows=3 hidden=7", [](Context& c) { return check_swiglu_fused(c, 3, 7, true); });

}  // namespace
}  // namespace vkspec
